"""The knowledge graph of one database: its entities, their columns down to every sub-field, and
the join keys between them. ``build.py`` makes it; ``views.py`` renders what the tools return.

    SchemaGraph(db_id, dialect, entities=(Entity, ...), joins=(JoinEdge, ...))
    Entity(name, tables, description, documented, rows, columns=(ColumnNode, ...))
    ColumnNode(path="links[].type", name="links.type", type="text", vocabulary=..., children=())
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

from core.types import Frozen
from pipelines.schema.catalog.vocabulary import Vocabulary
from pipelines.schema.errors import UnknownSchemaObject


class UnknownEntity(UnknownSchemaObject):
    """Entity names asked for that the database does not have, each with the closest names it
    does have (``suggestions``: asked name -> up to three, best first; possibly none)."""

    def __init__(self, db_id: str, suggestions: dict[str, tuple[str, ...]]) -> None:
        self.suggestions = suggestions
        hints = [f"{name!r}: did you mean {', '.join(c)}?" for name, c in suggestions.items() if c]
        super().__init__("entity", ", ".join(suggestions), db_id, "; ".join(hints))


class ColumnNode(Frozen):
    """A column or a sub-field of a nested column.

    ``path`` is how SQL reaches it: ``[]`` enters a list's elements (``links[].type``), ``.`` a
    struct's field (``sla_tracker.policy.name``); ``name`` is the schema view's dotted name
    (``links.type``). ``score`` and ``reasons`` say how informative a top-level column is for the
    catalog (scoring.py); sub-fields carry none."""

    path: str
    name: str
    type: str  # normal_types.normalise_type
    description: str = ""
    vocabulary: Vocabulary | None = None
    samples: tuple[str, ...] = ()
    primary_key: bool = False
    score: float = 0.0
    reasons: tuple[str, ...] = ()
    children: tuple[ColumnNode, ...] = ()

    def walk(self) -> Iterator[ColumnNode]:
        """This node, then its sub-fields depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


class JoinEdge(Frozen):
    """``entity.column`` holds keys of ``ref_entity.ref_column``; ``when`` narrows the rows of
    ``entity`` where it does (a typed link: ``links[].target_type = 'issue'``). ``inferred``: no
    declared foreign key; found by name and type, and confirmed by shared values or named by a
    sibling type field."""

    entity: str
    column: str
    ref_entity: str
    ref_column: str
    when: str = ""
    inferred: bool = False

    def text(self, seen_from: str) -> str:
        """One line from ``seen_from``'s side: its column first, the other side qualified."""
        mark = " (inferred)" if self.inferred else ""
        if seen_from == self.entity:
            when = f" when {self.when}" if self.when else ""
            return f"{self.column} = {self.ref_entity}.{self.ref_column}{when}{mark}"
        when = f" when {self.entity}.{self.when}" if self.when else ""
        return f"{self.ref_column} = {self.entity}.{self.column}{when}{mark}"


class Entity(Frozen):
    """A table, or the tables one logical table is partitioned into (``tables``, oldest
    first; the columns are the newest one's). ``documented``: the description comes from the
    database's documentation, else it is derived from the name and joins."""

    name: str
    tables: tuple[str, ...]
    description: str
    documented: bool
    rows: int | None
    columns: tuple[ColumnNode, ...]

    def fields(self) -> Iterator[ColumnNode]:
        """Every column and sub-field, depth first."""
        for column in self.columns:
            yield from column.walk()


class SchemaGraph(Frozen):
    """The entities of one database and the join keys between them."""

    db_id: str
    dialect: str
    entities: tuple[Entity, ...]
    joins: tuple[JoinEdge, ...] = ()

    def find(self, names: Sequence[str]) -> tuple[Entity, ...]:
        """The entities named (case-insensitive; a partition's table name finds its entity), in
        the order asked, each once; ``UnknownEntity`` lists every name not found."""
        by_name: dict[str, Entity] = {}
        for entity in self.entities:
            for alias in (*entity.tables, entity.name):
                by_name[alias.lower()] = entity
        found: list[Entity] = []
        missing: dict[str, tuple[str, ...]] = {}
        for name in names:
            entity = by_name.get(name.strip().lower())
            if entity is None:
                missing[name] = self.suggest(name)
            elif entity not in found:
                found.append(entity)
        if missing:
            raise UnknownEntity(self.db_id, missing)
        return tuple(found)

    def suggest(self, name: str) -> tuple[str, ...]:
        """Up to three entity names close to ``name`` (difflib), best first."""
        names = {e.name.lower(): e.name for e in self.entities}
        close = difflib.get_close_matches(name.strip().lower(), list(names), n=3, cutoff=0.5)
        return tuple(names[c] for c in close)

    def joins_of(self, entity: str) -> tuple[JoinEdge, ...]:
        """The join keys from or to ``entity``."""
        return tuple(j for j in self.joins if entity in (j.entity, j.ref_entity))
