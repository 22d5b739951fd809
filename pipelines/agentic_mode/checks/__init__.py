"""The checker chain's stages, one rule per module, each a repair of the written phase
(``pipelines/repair/base.py``) registered by name in ``pipelines/repair/registry.py``. The
agentic mode's chain runs ``scaling.checks`` in order (``pipelines/agentic_mode/chain.py``); by
default ``DEFAULT_CHECKS``: the rewriters first, then the blockers, cheapest first.

    rewriters   stray_apostrophes   (quotes)       a string an apostrophe broke, the apostrophe doubled
                identifier_casing   (casing)       names spelled as the schema spells them
                dialect_functions   (dialect)      other dialects' functions in the target's
                list_column_tables  (list_tables)  a list column read as a table, unnested from its owner
                list_field_reads    (list_fields)  a field read off a list of structs, read off its
                                                   items (not in DEFAULT_CHECKS: the chain hands
                                                   such a read to the model as unnest_missing; the
                                                   adaptive pipeline runs it by default)
                struct_column_tables (struct_tables) a struct column read as a table, read off its
                                                   owner (not in DEFAULT_CHECKS: unknown_names
                                                   names the owner to the model)
                subtype_tables      (subtype_tables) a kind of row named as a table (capabilities),
                                                   read as its table's rows of that kind (not in
                                                   DEFAULT_CHECKS: unknown_names reports the table)
                column_names        (column_names) unknown columns bound by the schema-grounded column
                                                   repair (not in DEFAULT_CHECKS: list it after the
                                                   other rewriters)
    blockers    unknown_functions   (unknown_functions)  functions the engine lacks (no schema)
                unknown_names       (unknown_names)      tables, qualifiers, columns that do not resolve
                nested_paths        (nested_paths)       fields read off lists, sub-fields that do not exist
                enum_values         (enum_values)        values outside a column's documented vocabulary
                like_on_enum        (like_on_enum)       LIKE on a column with a documented vocabulary
"""

from pipelines.agentic_mode.checks.base import ParsedSQL, parse
from pipelines.agentic_mode.checks.casing import IdentifierCasing
from pipelines.agentic_mode.checks.column_names import ColumnNames
from pipelines.agentic_mode.checks.dialect import DialectFunctions
from pipelines.agentic_mode.checks.enum_values import EnumValues
from pipelines.agentic_mode.checks.like_on_enum import LikeOnEnum
from pipelines.agentic_mode.checks.list_fields import ListFieldReads
from pipelines.agentic_mode.checks.list_tables import ListColumnTables
from pipelines.agentic_mode.checks.nested_paths import NestedPaths
from pipelines.agentic_mode.checks.quotes import StrayApostrophes
from pipelines.agentic_mode.checks.struct_tables import StructColumnTables
from pipelines.agentic_mode.checks.subtype_tables import SubtypeTables
from pipelines.agentic_mode.checks.unknown_functions import UnknownFunctions
from pipelines.agentic_mode.checks.unknown_names import UnknownNames

DEFAULT_CHECKS: tuple[str, ...] = (
    "stray_apostrophes",
    "identifier_casing",
    "dialect_functions",
    "list_column_tables",
    "unknown_functions",
    "unknown_names",
    "nested_paths",
    "enum_values",
    "like_on_enum",
)

__all__ = [
    "DEFAULT_CHECKS",
    "ColumnNames",
    "DialectFunctions",
    "EnumValues",
    "IdentifierCasing",
    "LikeOnEnum",
    "ListColumnTables",
    "ListFieldReads",
    "NestedPaths",
    "ParsedSQL",
    "StrayApostrophes",
    "StructColumnTables",
    "SubtypeTables",
    "UnknownFunctions",
    "UnknownNames",
    "parse",
]
