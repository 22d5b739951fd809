"""The join graph: declared foreign keys plus join keys inferred by name and type.

Many Spider databases declare no foreign keys, so a table pair without a declared key gets
inferred edges (``inferred=True``) by these rules, checked in order:

    rule         source column                      target column
    ----------   --------------------------------   ---------------------------------------
    same_name    same name, compatible type          sole primary key of another table
    table_id     ``<table>_id`` / ``<table>id``      ``id``, the sole primary key of <table>

A generic ``id`` column never matches by name alone (every table has one). Type families come
from SQLite's affinity rules (text, number, temporal; an empty type matches anything).

    >>> from pipelines.schema import introspect
    >>> graph = join_graph(introspect(db))
    >>> for e in graph.edges:
    ...     print(f"{e.table}.{e.column} -> {e.ref_table}" + (" (inferred)" if e.inferred else ""))
    concert.Stadium_ID -> stadium
    singer_in_concert.Singer_ID -> singer (inferred)
    singer_in_concert.concert_ID -> concert (inferred)
    >>> [(e.table, e.column) for e in graph.path("concert", "singer")]  # the edges to walk
    [('singer_in_concert', 'concert_ID'), ('singer_in_concert', 'Singer_ID')]
"""

from __future__ import annotations

from collections import deque

from core.types import Frozen
from pipelines.contracts import ColumnInfo, ForeignKey, SchemaView, TableInfo

GENERIC_KEY_NAMES = frozenset({"id", "code", "key", "name"})

# (substring of the upper-cased declared type, family); first match wins.
TYPE_FAMILIES: tuple[tuple[str, str], ...] = (
    ("DATE", "temporal"),
    ("TIME", "temporal"),
    ("INT", "number"),
    ("CHAR", "text"),
    ("CLOB", "text"),
    ("TEXT", "text"),
    ("STRING", "text"),
    ("BLOB", "any"),
    ("REAL", "number"),
    ("FLOA", "number"),
    ("DOUB", "number"),
    ("DEC", "number"),
    ("NUM", "number"),
)


def type_family(declared: str) -> str:
    upper = declared.upper()
    if not upper:
        return "any"
    return next((family for marker, family in TYPE_FAMILIES if marker in upper), "number")


def _compatible(a: ColumnInfo, b: ColumnInfo) -> bool:
    fa, fb = type_family(a.type), type_family(b.type)
    return fa == fb or "any" in (fa, fb)


def sole_primary_key(table: TableInfo) -> ColumnInfo | None:
    """The table's primary-key column when it has exactly one."""
    pks = [c for c in table.columns if c.primary_key]
    return pks[0] if len(pks) == 1 else None


def _table_id_names(table: str) -> set[str]:
    """Column names that point at ``table`` by convention: ``city_id``/``cityid`` for ``cities``."""
    base = table.lower()
    stems = {base}
    if base.endswith("ies"):
        stems.add(base[:-3] + "y")
    if base.endswith("es"):
        stems.add(base[:-2])
    if base.endswith("s"):
        stems.add(base[:-1])
    return {f"{stem}{sep}id" for stem in stems for sep in ("_", "")}


def infer_join_keys(
    tables: tuple[TableInfo, ...], declared: tuple[ForeignKey, ...] = ()
) -> list[ForeignKey]:
    """Inferred edges between table pairs that have no declared foreign key."""
    linked = {frozenset((fk.table.lower(), fk.ref_table.lower())) for fk in declared}
    order = {t.name: i for i, t in enumerate(tables)}
    out: list[ForeignKey] = []
    for target in tables:
        pk = sole_primary_key(target)
        if pk is None:
            continue
        for source in tables:
            if (
                source.name == target.name
                or frozenset((source.name.lower(), target.name.lower())) in linked
            ):
                continue
            for column in source.columns:
                if not _compatible(column, pk):
                    continue
                same_name = (
                    column.name.lower() == pk.name.lower()
                    and pk.name.lower() not in GENERIC_KEY_NAMES
                )
                table_id = pk.name.lower() == "id" and column.name.lower() in _table_id_names(
                    target.name
                )
                if not (same_name or table_id):
                    continue
                if (
                    same_name
                    and column.primary_key
                    and sole_primary_key(source) is column
                    and order[source.name] < order[target.name]
                ):
                    continue  # two sole PKs of the same name (1:1 tables): one edge, later -> earlier
                out.append(
                    ForeignKey(
                        table=source.name,
                        column=column.name,
                        ref_table=target.name,
                        ref_column=pk.name,
                        inferred=True,
                    )
                )
    return out


class JoinGraph(Frozen):
    """Undirected view over join edges, for finding how to connect tables."""

    edges: tuple[ForeignKey, ...]

    def path(self, source: str, target: str) -> tuple[ForeignKey, ...] | None:
        """The fewest edges connecting two tables (breadth-first), or None when disconnected."""
        if source == target:
            return ()
        previous: dict[str, tuple[str, ForeignKey]] = {}
        queue, seen = deque([source]), {source}
        while queue:
            node = queue.popleft()
            for e in self.edges:
                if node not in (e.table, e.ref_table):
                    continue
                other = e.ref_table if e.table == node else e.table
                if other in seen:
                    continue
                seen.add(other)
                previous[other] = (node, e)
                if other == target:
                    steps: list[ForeignKey] = []
                    while other != source:
                        other, edge = previous[other]
                        steps.append(edge)
                    return tuple(reversed(steps))
                queue.append(other)
        return None


def join_graph(view: SchemaView) -> JoinGraph:
    """The view's declared foreign keys plus inferred join keys (idempotent on its own output)."""
    declared = tuple(fk for fk in view.foreign_keys if not fk.inferred)
    edges = list(declared) + infer_join_keys(view.tables, declared)
    return JoinGraph(edges=tuple(dict.fromkeys(edges)))
