"""Which cell values go into a database's cell index, and reading them.

    SchemaView + connection ──► text columns ──(column rules)──► distinct values, most
        frequent first, capped per column ──(value rules)──► [CellValue] + counts of what was left out

Column rules (a column is skipped when the first one matches):

    reason          matches
    -------------   ------------------------------------------------------------
    primary key     the table's sole primary-key column (when ``skip_primary_keys``); a part
                    of a composite key is often a value (countrylanguage.Language) and stays
    id-like name    ``id``, ``*_id``, ``id_*``, ``* id``, camelCase ``*Id``/``*ID``, ``uuid``, ``guid``
    email column    a name containing ``email`` / ``e_mail`` / ``e-mail``

Value rules (a value is dropped, and counted under its reason):

    reason          matches
    -------------   ------------------------------------------------------------
    not UTF-8       bytes that do not decode as UTF-8 (SQLite stores whatever it is given)
    blank           only whitespace
    email           looks like ``user@host.tld``
    uuid            looks like a UUID
    too long        over ``max_value_chars`` characters (also filtered in the query)
    date or time    an ISO date / timestamp (when ``skip_dates_and_numbers``)
    number-like     digits and separators only: 1992, 216-201-3124, 45263 (same setting)

Dates and number-like strings are left out by default: a question states them verbatim, so
looking them up adds nothing, and they would crowd out the words (in the demo database 80%
of distinct text values are dates, phone numbers and zip codes).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from types import ModuleType
from typing import Any

from core.types import Frozen
from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
from pipelines.indexing.settings import CellSettings

ID_LIKE = re.compile(r"(?:^|[_\s-])id$|^id[_\s-]|^u?uid$|^guid$", re.IGNORECASE)
ID_LIKE_CAMEL = re.compile(r"[a-z]I[dD]$")  # case-sensitive: customerId, not "paid"
EMAIL_NAME = re.compile(r"e[_-]?mail", re.IGNORECASE)
EMAIL_VALUE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
DATE_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$")
NUMBER_LIKE = re.compile(r"^[\d\s().,+\-/:]*\d[\d\s().,+\-/:]*$")
UUID_VALUE = re.compile(
    r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
)


def _id_like(name: str) -> bool:
    last = name.split(".")[-1]
    return bool(ID_LIKE.search(last) or ID_LIKE_CAMEL.search(last))


def _sole_primary_key(column: ColumnInfo, table: TableInfo) -> bool:
    return column.primary_key and sum(c.primary_key for c in table.columns) == 1


# Each rule sees (column, its table, settings). Changing a rule: bump settings.CELL_RULES_VERSION.
COLUMN_RULES: tuple[tuple[str, Callable[[ColumnInfo, TableInfo, CellSettings], bool]], ...] = (
    ("primary key", lambda c, t, s: s.skip_primary_keys and _sole_primary_key(c, t)),
    ("id-like name", lambda c, t, s: _id_like(c.name)),
    ("email column", lambda c, t, s: bool(EMAIL_NAME.search(c.name))),
)

VALUE_RULES: tuple[tuple[str, Callable[[str, CellSettings], bool]], ...] = (
    ("blank", lambda v, s: not v.strip()),
    ("too long", lambda v, s: len(v) > s.max_value_chars),
    ("email", lambda v, s: bool(EMAIL_VALUE.match(v))),
    ("uuid", lambda v, s: bool(UUID_VALUE.match(v))),
    ("date or time", lambda v, s: s.skip_dates_and_numbers and bool(DATE_VALUE.match(v))),
    ("number-like", lambda v, s: s.skip_dates_and_numbers and bool(NUMBER_LIKE.match(v))),
)


class CellValue(Frozen):
    table: str
    column: str  # dotted path for a nested sub-field
    value: str


class CellExtraction(Frozen):
    """The values to index, and what was left out and why."""

    values: tuple[CellValue, ...]
    skipped_columns: tuple[tuple[str, str], ...] = ()  # (table.column, reason)
    skipped_values: tuple[tuple[str, int], ...] = ()  # (reason, count)


def _find_column(table: TableInfo, path: str) -> ColumnInfo | None:
    stack = list(table.columns)
    while stack:
        column = stack.pop()
        if column.name == path:
            return column
        stack.extend(column.children)
    return None


def column_skip_reason(column: ColumnInfo, table: TableInfo, settings: CellSettings) -> str | None:
    return next((reason for reason, rule in COLUMN_RULES if rule(column, table, settings)), None)


def value_skip_reason(value: str, settings: CellSettings) -> str | None:
    return next((reason for reason, rule in VALUE_RULES if rule(value, settings)), None)


def _decode(raw: Any) -> str | None:
    if isinstance(raw, bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return str(raw)


def extract_cell_values(
    conn: Any, engine: ModuleType, view: SchemaView, settings: CellSettings
) -> CellExtraction:
    """Read the indexable values of every table through an engine file (schema/sqlite.py, ...)."""
    values: list[CellValue] = []
    skipped_columns: list[tuple[str, str]] = []
    skipped_values: Counter[str] = Counter()
    for table in view.tables:
        for path in engine.text_columns(table):
            column = _find_column(table, path)
            reason = column_skip_reason(column, table, settings) if column else "unknown column"
            if reason:
                skipped_columns.append((f"{table.name}.{path}", reason))
                continue
            raws = engine.distinct_text_values(
                conn,
                table,
                path,
                limit=settings.max_values_per_column,
                max_chars=settings.max_value_chars,
            )
            for raw in raws:
                value = _decode(raw)
                reason = "not UTF-8" if value is None else value_skip_reason(value, settings)
                if reason:
                    skipped_values[reason] += 1
                    continue
                values.append(CellValue(table=table.name, column=path, value=value))
    return CellExtraction(
        values=tuple(values),
        skipped_columns=tuple(skipped_columns),
        skipped_values=tuple(sorted(skipped_values.items())),
    )
