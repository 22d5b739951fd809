"""The checker chain's stages, one rule per module; the chain runs them in this order, the
rewriters first, then the blockers, cheapest first (``pipelines/agentic/chain.py``).

    rewriters   quotes.StrayApostrophes        a string an apostrophe broke, the apostrophe doubled
                casing.IdentifierCasing        names spelled as the schema spells them
                dialect.DialectFunctions       other dialects' functions in the target's
                list_tables.ListColumnTables   a list column read as a table, unnested from its owner
                column_names.ColumnNames       unknown columns bound by the schema-grounded column
                                               repair (not in DEFAULT_STAGES: stages(bind_columns=True))
    blockers    unknown_functions.UnknownFunctions   functions the engine lacks (no schema)
                unknown_names.UnknownNames     tables, qualifiers, columns that do not resolve
                nested_paths.NestedPaths       fields read off lists, sub-fields that do not exist
                enum_values.EnumValues         values outside a column's documented vocabulary
                like_on_enum.LikeOnEnum        LIKE on a column with a documented vocabulary
"""

from pipelines.agentic.checks.base import (
    Blocker,
    CheckContext,
    ParsedSQL,
    Rewrite,
    Rewriter,
    Stage,
    parse,
)
from pipelines.agentic.checks.casing import IdentifierCasing
from pipelines.agentic.checks.column_names import ColumnNames
from pipelines.agentic.checks.dialect import DialectFunctions
from pipelines.agentic.checks.enum_values import EnumValues
from pipelines.agentic.checks.like_on_enum import LikeOnEnum
from pipelines.agentic.checks.list_tables import ListColumnTables
from pipelines.agentic.checks.nested_paths import NestedPaths
from pipelines.agentic.checks.quotes import StrayApostrophes
from pipelines.agentic.checks.unknown_functions import UnknownFunctions
from pipelines.agentic.checks.unknown_names import UnknownNames

DEFAULT_STAGES: tuple[Stage, ...] = (
    StrayApostrophes(),
    IdentifierCasing(),
    DialectFunctions(),
    ListColumnTables(),
    UnknownFunctions(),
    UnknownNames(),
    NestedPaths(),
    EnumValues(),
    LikeOnEnum(),
)


def stages(*, bind_columns: bool = False) -> tuple[Stage, ...]:
    """The default chain, with ``ColumnNames`` after the other rewriters when ``bind_columns``
    (``scaling.bind_columns`` of the agentic mode)."""
    if not bind_columns:
        return DEFAULT_STAGES
    rewriters = tuple(s for s in DEFAULT_STAGES if isinstance(s, Rewriter))
    return (*rewriters, ColumnNames(), *DEFAULT_STAGES[len(rewriters) :])


__all__ = [
    "DEFAULT_STAGES",
    "Blocker",
    "CheckContext",
    "ColumnNames",
    "DialectFunctions",
    "EnumValues",
    "IdentifierCasing",
    "LikeOnEnum",
    "ListColumnTables",
    "NestedPaths",
    "ParsedSQL",
    "Rewrite",
    "Rewriter",
    "Stage",
    "StrayApostrophes",
    "UnknownFunctions",
    "UnknownNames",
    "parse",
    "stages",
]
