"""Build a database's knowledge graph from its schema view, its documentation and a few
read-only queries.

    introspect(db) ──► tables, columns down to every sub-field, documentation, samples, keys
        ──► partition_groups: tables split by date or number suffix become one entity
        ──► per entity (its newest table): normalised types; a nested column's documentation
            shared among its sub-fields; each text column's distinct values (read-only, at most
            max_vocabulary + 1) and the labels its documentation names ──► its vocabulary
        ──► join keys: declared foreign keys; inferred ones (joins.py) kept where the
            referencing column's values occur in the key; sub-fields named like another table's
            key (``owned_by[].user_id`` ──► users.user_id), narrowed by a sibling field whose
            vocabulary names that table (``links[].target_type = 'issue'``) or else confirmed
            by shared values
        ──► column scores (scoring.py) ──► SchemaGraph

Every query runs on a ``connect_readonly`` connection: the database is never written.
"""

from __future__ import annotations

import logging
from contextlib import closing
from types import ModuleType
from typing import Any

from pipelines.contracts import ColumnInfo, DatabaseRef, ForeignKey, SchemaView, TableInfo
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema.catalog.model import ColumnNode, Entity, JoinEdge, SchemaGraph
from pipelines.schema.catalog.normal_types import list_depth, normalise_type
from pipelines.schema.catalog.partitions import partition_groups
from pipelines.schema.catalog.scoring import id_like, score
from pipelines.schema.catalog.vocabulary import vocabulary
from pipelines.schema.documentation.subfields import share
from pipelines.schema.documentation.vocabulary import Labels, column_labels
from pipelines.schema.introspect import DRIVER_ERRORS, engine_for, introspect
from pipelines.schema.joins import GENERIC_KEY_NAMES, sole_primary_key
from pipelines.schema.render import flatten
from pipelines.settings import CatalogSettings

log = logging.getLogger(__name__)

VALUE_CHARS = 200  # a longer value is no vocabulary label: not read as one
OVERLAP_SAMPLE = 200  # distinct values of a referencing column looked up in the key


class _Reader:
    """The read-only queries of one build, on one connection."""

    def __init__(
        self, conn: Any, engine: ModuleType, settings: CatalogSettings, view: SchemaView
    ) -> None:
        self.conn = conn
        self.engine = engine
        self.settings = settings
        self.dialect = view.dialect
        # Key columns (declared or inferred): their values are references, not a vocabulary.
        self.foreign_keys: dict[str, set[str]] = {t.name: set() for t in view.tables}
        for fk in view.foreign_keys:
            self.foreign_keys[fk.table].add(fk.column)
        self._text: dict[str, set[str]] = {}

    def text_leaves(self, table: TableInfo) -> set[str]:
        """Dotted names of the table's text columns and sub-fields."""
        if table.name not in self._text:
            self._text[table.name] = set(self.engine.text_columns(table))
        return self._text[table.name]

    def distinct(self, table: TableInfo, path: str) -> list[str]:
        """Distinct text values at ``path``, most frequent first, at most max_vocabulary + 1."""
        raws = self.engine.distinct_text_values(
            self.conn,
            table,
            path,
            limit=self.settings.max_vocabulary + 1,
            max_chars=VALUE_CHARS,
        )
        return [r.decode("utf-8", "replace") if isinstance(r, bytes) else str(r) for r in raws]

    def shares_values(self, table: TableInfo, path: str, ref: TableInfo, ref_column: str) -> bool:
        """Whether some of the first OVERLAP_SAMPLE distinct values at ``table.path`` occur in
        ``ref.ref_column``."""
        source, expr, _ = self.engine.leaf_query(table, path)
        ref_source, ref_expr, _ = self.engine.leaf_query(ref, ref_column)
        sql = (
            f"SELECT count(*) FROM (SELECT DISTINCT x FROM (SELECT {expr} AS x FROM {source}) "
            f"WHERE x IS NOT NULL LIMIT {OVERLAP_SAMPLE}) AS s "
            f"WHERE x IN (SELECT {ref_expr} FROM {ref_source})"
        )
        try:
            (hits,) = self.conn.execute(sql).fetchone()
        except DRIVER_ERRORS as exc:  # incomparable types: no shared values
            log.debug("no overlap check of %s.%s: %s", table.name, path, exc)
            return False
        return hits > 0


def _node(
    reader: _Reader,
    table: TableInfo,
    column: ColumnInfo,
    path: str,
    top: ColumnInfo,
    shared: dict[str, str],
    named: dict[str, Labels],
) -> ColumnNode:
    """A top-level column (``column is top``) or one of its sub-fields, with those below it;
    ``shared``: the top column's description split among its sub-fields, ``named``: the labels
    documented for each."""
    if column is top:
        description = shared.get("", "") if column.children else column.description or ""
    else:
        description = column.description or shared.get(column.name[len(top.name) + 1 :], "")
    found = None
    if column.name in reader.text_leaves(table) and not column.children:
        key = sole_primary_key(table) is column or column.name in reader.foreign_keys[table.name]
        found = vocabulary(
            named.get(column.name, Labels()).candidates,
            reader.distinct(table, column.name),
            max_values=reader.settings.max_vocabulary,
            rows=table.row_count,
            observable=not (key or id_like(column.name.rsplit(".", 1)[-1])),
        )
    normal = normalise_type(column.type, reader.dialect)
    step = "[]" * list_depth(normal) + "."
    children = tuple(
        _node(reader, table, child, path + step + child.name.rsplit(".", 1)[-1], top, shared, named)
        for child in column.children
    )
    return ColumnNode(
        path=path,
        name=column.name,
        type=normal,
        description=description,
        vocabulary=found,
        samples=() if found is not None or children else column.samples,
        primary_key=column.primary_key,
        children=children,
    )


def _columns(reader: _Reader, table: TableInfo) -> tuple[ColumnNode, ...]:
    out = []
    for top in table.columns:
        below = [c.name[len(top.name) + 1 :] for c in flatten(top)][1:]
        shared = share(top.description or "", below) if below else {}
        out.append(_node(reader, table, top, top.name, top, shared, column_labels(top)))
    return tuple(out)


def _forms(name: str) -> set[str]:
    """``name`` and its singular forms: ``issues`` -> issues, issue, issu."""
    base = name.lower()
    forms = {base}
    for plural, single in (("ies", "y"), ("es", ""), ("s", "")):
        if base.endswith(plural):
            forms.add(base[: -len(plural)] + single)
    return forms


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _discriminator(
    siblings: tuple[ColumnNode, ...], target: Entity, names: dict[str, str]
) -> str | None:
    """The condition under which a key sub-field points at ``target``: a sibling whose values
    name entities (``names``: form -> entity) and one of them ``target`` (``target_type =
    'issue'``); ``""`` when no sibling names entities; None when siblings name only others."""
    typed = False
    for sibling in siblings:
        if sibling.vocabulary is None:
            continue
        for value in sibling.vocabulary.values:
            named = names.get(value.lower())
            typed = typed or named is not None
            if named == target.name:
                return f"{sibling.path} = {_literal(value)}"
    return None if typed else ""


def _nested_joins(
    reader: _Reader, entities: list[Entity], newest: dict[str, TableInfo]
) -> list[JoinEdge]:
    """Sub-fields named like another entity's sole key (``owned_by[].user_id``)."""
    names = {form: e.name for e in entities for t in (e.name, *e.tables) for form in _forms(t)}
    keys: dict[str, list[tuple[Entity, ColumnInfo]]] = {}
    for entity in entities:
        pk = sole_primary_key(newest[entity.name])
        if pk is not None and pk.name.lower() not in GENERIC_KEY_NAMES:
            keys.setdefault(pk.name.lower(), []).append((entity, pk))
    edges = []
    for entity in entities:
        table = newest[entity.name]
        for parent in (n for top in entity.columns for n in top.walk() if n.children):
            for node in parent.children:
                for target, pk in keys.get(node.name.rsplit(".", 1)[-1].lower(), []):
                    if node.children or node.type != normalise_type(pk.type, reader.dialect):
                        continue
                    when = _discriminator(parent.children, target, names)
                    ref = newest[target.name]
                    if when is None or (
                        not when and not reader.shares_values(table, node.name, ref, pk.name)
                    ):
                        continue
                    edges.append(
                        JoinEdge(
                            entity=entity.name,
                            column=node.path,
                            ref_entity=target.name,
                            ref_column=pk.name,
                            when=when,
                            inferred=True,
                        )
                    )
    return edges


def _foreign_keys(
    reader: _Reader,
    fks: tuple[ForeignKey, ...],
    tables: dict[str, TableInfo],
    entity_of: dict[str, str],
) -> list[JoinEdge]:
    """Declared keys, and inferred ones whose referencing values occur in the key."""
    edges = []
    for fk in fks:
        if fk.inferred and not reader.shares_values(
            tables[fk.table], fk.column, tables[fk.ref_table], fk.ref_column
        ):
            continue
        edges.append(
            JoinEdge(
                entity=entity_of[fk.table],
                column=fk.column,
                ref_entity=entity_of[fk.ref_table],
                ref_column=fk.ref_column,
                inferred=fk.inferred,
            )
        )
    return edges


def _described(entity: Entity, joins: list[JoinEdge]) -> Entity:
    """The entity with its columns scored, and a derived description where none is documented:
    ``links a and b`` for a table whose every column is a key into another entity, else none."""
    join_columns = {j.column for j in joins if j.entity == entity.name}
    join_columns |= {j.ref_column for j in joins if j.ref_entity == entity.name}
    columns = []
    for column in entity.columns:
        points, reasons = score(column, join_columns)
        columns.append(column.model_copy(update={"score": points, "reasons": reasons}))
    description = entity.description
    outgoing = [j for j in joins if j.entity == entity.name and j.ref_entity != entity.name]
    keys = {j.column for j in outgoing}
    if not entity.documented and len(keys) >= 2 and keys >= {c.path for c in entity.columns}:
        targets = list(dict.fromkeys(j.ref_entity for j in outgoing))
        description = f"links {', '.join(targets[:-1])} and {targets[-1]}"
    return entity.model_copy(update={"columns": tuple(columns), "description": description})


def build_graph(db: DatabaseRef, settings: CatalogSettings) -> SchemaGraph:
    """The knowledge graph of ``db`` (module docstring); raises ``DatabaseUnavailable`` when the
    file is missing or not a database."""
    view = introspect(db, settings.sample_values)
    groups = partition_groups(view.tables)
    entity_of = {t.name: group.name for group in groups for t in group.tables}
    newest = {group.name: group.newest for group in groups}
    try:
        with closing(connect_readonly(db)) as conn:
            reader = _Reader(conn, engine_for(db), settings, view)
            entities = []
            for group in groups:
                described = (t.description for t in reversed(group.tables) if t.description)
                documented = next(described, "")
                rows = [t.row_count for t in group.tables]
                entities.append(
                    Entity(
                        name=group.name,
                        tables=tuple(t.name for t in group.tables),
                        description=documented,
                        documented=bool(documented),
                        rows=None if None in rows else sum(rows),
                        columns=_columns(reader, group.newest),
                    )
                )
            tables = {t.name: t for t in view.tables}
            joins = _foreign_keys(reader, view.foreign_keys, tables, entity_of)
            joins += _nested_joins(reader, entities, newest)
    except DRIVER_ERRORS as exc:
        raise DatabaseUnavailable(db.path, f"cannot read schema: {exc}") from exc
    joins = list(dict.fromkeys(joins))
    return SchemaGraph(
        db_id=db.db_id,
        dialect=db.dialect,
        entities=tuple(_described(e, joins) for e in entities),
        joins=tuple(joins),
    )
