"""The repairs and checks by name: a strategy lists the ones it runs in its settings
(``scaling.repairs`` of the adaptive pipeline, ``scaling.checks`` of the agentic mode), each a
name or ``{name: {setting: value}}``. A new repair is its module (``pipelines/repair/base.py``)
and one line here.

    >>> [type(r).__name__ for r in build_repairs(["joins", {"columns": {"rounds": 2}}])]
    ['Joins', 'Columns']
    >>> build_repairs([{"columns": {"rounds": 2}}])[0].rounds
    2
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator

from pipelines.repair.base import Repair

# name ──► "module:Class" of its Repair (imported on first use)
REPAIRS: dict[str, str] = {
    # on a candidate before it runs, on its error, on an empty result (pipelines/repair/rounds.py)
    "joins": "pipelines.repair.joins:Joins",
    "columns": "pipelines.repair.columns:Columns",
    "quotes": "pipelines.repair.quotes:Quotes",
    "double_quoted_strings": "pipelines.repair.double_quotes:DoubleQuotedStrings",
    "values": "pipelines.repair.values:Values",
    "sqlite_dates": "pipelines.repair.dates:SqliteDates",
    # the agentic checker chain's (pipelines/agentic_mode/checks/)
    "stray_apostrophes": "pipelines.agentic_mode.checks.quotes:StrayApostrophes",
    "identifier_casing": "pipelines.agentic_mode.checks.casing:IdentifierCasing",
    "dialect_functions": "pipelines.agentic_mode.checks.dialect:DialectFunctions",
    "list_column_tables": "pipelines.agentic_mode.checks.list_tables:ListColumnTables",
    "list_field_reads": "pipelines.agentic_mode.checks.list_fields:ListFieldReads",
    "struct_column_tables": "pipelines.agentic_mode.checks.struct_tables:StructColumnTables",
    "subtype_tables": "pipelines.agentic_mode.checks.subtype_tables:SubtypeTables",
    "column_names": "pipelines.agentic_mode.checks.column_names:ColumnNames",
    "unknown_functions": "pipelines.agentic_mode.checks.unknown_functions:UnknownFunctions",
    "unknown_names": "pipelines.agentic_mode.checks.unknown_names:UnknownNames",
    "nested_paths": "pipelines.agentic_mode.checks.nested_paths:NestedPaths",
    "enum_values": "pipelines.agentic_mode.checks.enum_values:EnumValues",
    "like_on_enum": "pipelines.agentic_mode.checks.like_on_enum:LikeOnEnum",
}

# One entry of a strategy's list: a name, or a name with its repair's settings.
RepairEntry = str | Mapping[str, Mapping[str, Any]]


def repair_class(name: str) -> type[Repair]:
    if name not in REPAIRS:
        raise ValueError(f"no repair {name!r}: one of {', '.join(REPAIRS)}")
    module, cls = REPAIRS[name].split(":")
    return getattr(importlib.import_module(module), cls)


def build_repairs(entries: Sequence[RepairEntry]) -> tuple[Repair, ...]:
    """Each entry as its repair, with its settings, in order."""
    built = []
    for entry in entries:
        if isinstance(entry, str):
            built.append(repair_class(entry)())
            continue
        if len(entry) != 1:
            raise ValueError(f"a repair with settings is one {{name: {{...}}}}, not {dict(entry)}")
        ((name, settings),) = entry.items()
        built.append(repair_class(name)(**(settings or {})))
    return tuple(built)


def _buildable(entries: tuple[RepairEntry, ...]) -> tuple[RepairEntry, ...]:
    build_repairs(entries)  # an unknown name or setting fails when the settings load
    return entries


# A strategy's field: the entries as written (so the settings dump as they were given).
RepairList = Annotated[tuple[RepairEntry, ...], AfterValidator(_buildable)]
