"""Partition collapsing: tables that are one logical entity split by date or number.

Tables whose names differ only by a date or number suffix (``events_2023``, ``events_2024``,
``sales_2024_01``, ``log_20240101``, ``orders_2024q1``, ``shard3``) and share their columns (the
same column names, at least ``MIN_SHARED`` of their union) are one entity named by the common
stem (``events``); a table named the stem itself joins the group on the same condition (one
that does not leaves the group the name ``events_partitions``). A
suffix alone is not enough: ``t1`` and ``t2`` with different columns stay two entities, and so
does a lone ``stats_2024``.

    >>> from pipelines.contracts import ColumnInfo, TableInfo
    >>> def table(name, *cols):
    ...     return TableInfo(name=name, columns=tuple(ColumnInfo(name=c, type="INT") for c in cols))
    >>> groups = partition_groups([table("events_2023", "id", "kind"),
    ...     table("events_2024", "id", "kind"), table("t1", "a"), table("t2", "b")])
    >>> [(g.name, [t.name for t in g.tables]) for g in groups]
    [('events', ['events_2023', 'events_2024']), ('t1', ['t1']), ('t2', ['t2'])]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.types import Frozen
from pipelines.contracts import TableInfo

# The shortest stem ending in a letter, an optional separator, then a date (2024, 2024_01,
# 2024-01-31, 20240131, 2024q1, 2024_q1) or a plain number up to the end of the name.
SUFFIX = re.compile(
    r"^(?P<stem>.*?[A-Za-z])[_\-.]?"
    r"(?P<suffix>\d{4}(?:[_\-]?(?:\d{2}|[qQ][1-4]))?(?:[_\-]?\d{2})?|\d+)$"
)
MIN_SHARED = 0.8  # shared column names / all column names of the pair


class TableGroup(Frozen):
    """One entity's tables: one table, or its partitions sorted by name (newest last)."""

    name: str
    tables: tuple[TableInfo, ...]

    @property
    def newest(self) -> TableInfo:
        return self.tables[-1]


def _stem(name: str) -> str | None:
    match = SUFFIX.match(name)
    return match.group("stem") if match else None


def _columns(table: TableInfo) -> set[str]:
    return {c.name.lower() for c in table.columns}


def _alike(a: TableInfo, b: TableInfo) -> bool:
    ours, theirs = _columns(a), _columns(b)
    return bool(ours | theirs) and len(ours & theirs) / len(ours | theirs) >= MIN_SHARED


def partition_groups(tables: Sequence[TableInfo]) -> list[TableGroup]:
    """The entities of ``tables``, in catalog order of each one's first table."""
    by_stem: dict[str, list[TableInfo]] = {}
    for table in tables:
        if stem := _stem(table.name):
            by_stem.setdefault(stem, []).append(table)
    grouped: dict[str, TableGroup] = {}  # table name -> its group
    for stem, members in by_stem.items():
        newest = max(members, key=lambda t: t.name)
        alike = [t for t in members if _alike(t, newest)]
        bare = next((t for t in tables if t.name.lower() == stem.lower()), None)
        if bare is not None and _alike(bare, newest):
            alike.append(bare)
        if len(alike) < 2:
            continue
        name = stem
        if bare is not None:  # the stem's own table, or another table of that name
            name = bare.name if bare in alike else f"{stem}_partitions"
        group = TableGroup(name=name, tables=tuple(sorted(alike, key=lambda t: t.name)))
        for table in alike:
            grouped[table.name] = group
    out: list[TableGroup] = []
    for table in tables:
        group = grouped.get(table.name, TableGroup(name=table.name, tables=(table,)))
        if group.name not in {g.name for g in out}:
            out.append(group)
    return out
