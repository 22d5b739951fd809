"""What the two tools return, and its text for a prompt.

    SchemaGraph ──catalog_of(graph, settings)──► Catalog: per entity one line of description, its
                                                 row count, its best-scored columns, its joins
                ──schemas_of(graph, names)──────► EntitySchemas: the entities asked for, every
                                                 column and sub-field, their values, their joins

Both texts are plain lines a small model reads as they are; ``tokens`` estimates their prompt
size as the schema prompts do (``pipelines.schema.token_size``).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.types import Frozen
from pipelines.schema.catalog.model import ColumnNode, Entity, JoinEdge, SchemaGraph
from pipelines.schema.view import token_size
from pipelines.settings import CatalogSettings

SUMMARY_CHARS = 120  # an entity's description in the catalog: its first sentence, cut here
TIMES = ("date", "timestamp", "time")  # one sample shows the format; each digit is a token


def rows_text(rows: int | None) -> str:
    """A row count in few characters (digits are a token each): 337, 1.2k, 20k, 3.4M."""
    if rows is None:
        return "? rows"
    for limit, unit in ((1_000_000, "M"), (1_000, "k")):
        if rows >= limit:
            value = rows / limit
            shown = f"{value:.1f}".removesuffix(".0") if value < 10 else f"{value:.0f}"
            return f"{shown}{unit} rows"
    return f"{rows} rows"


def summary(description: str) -> str:
    """The first sentence of ``description``, cut at a word boundary after SUMMARY_CHARS."""
    first = description.split(". ", 1)[0].strip()
    if len(first) > SUMMARY_CHARS:
        first = first[:SUMMARY_CHARS].rsplit(" ", 1)[0] + " ..."
    return first.rstrip(".")


class CatalogEntry(Frozen):
    """One entity as the catalog shows it."""

    name: str
    description: str  # first sentence
    documented: bool
    rows: int | None
    tables: tuple[str, ...]
    columns: tuple[ColumnNode, ...]  # the best-scored, best first
    hidden: int  # columns not shown
    joins: tuple[str, ...]  # entities it joins
    targets: dict[str, tuple[str, ...]]  # shown column path -> entities its keys point at

    def text(self, shown_values: int) -> str:
        size = rows_text(self.rows)
        if len(self.tables) > 1:
            size += f" in {len(self.tables)} tables {self.tables[0]} .. {self.tables[-1]}"
        lines = [f"{self.name} ({size})" + (f": {self.description}" if self.description else "")]
        columns = [self._column(c, shown_values) for c in self.columns]
        more = f"; +{self.hidden} more" if self.hidden else ""
        lines.append(f"  columns: {'; '.join(columns)}{more}")
        if self.joins:
            lines.append(f"  joins: {', '.join(self.joins)}")
        return "\n".join(lines)

    def _column(self, column: ColumnNode, shown_values: int) -> str:
        text = column.path
        if column.vocabulary is not None and shown_values > 0:
            values = list(column.vocabulary.values[:shown_values])
            rest = len(column.vocabulary.values) - len(values)
            text += " {" + ", ".join(values + ([f"+{rest}"] if rest else [])) + "}"
        else:
            text += f" {column.type}"
        if column.primary_key:
            text += " key"
        if targets := self.targets.get(column.path):
            text += f" -> {'|'.join(targets)}"
        return text


class Catalog(Frozen):
    """The entities of one database: what ``catalog(db)`` returns."""

    db_id: str
    entities: tuple[CatalogEntry, ...]
    shown_values: int

    def text(self) -> str:
        head = (
            f"Entities of {self.db_id}: name (rows): description; best columns ({{values}}, "
            "-> entity a key points at); joined entities. entity_schema(names) has every column."
        )
        return "\n".join([head, *(e.text(self.shown_values) for e in self.entities)])

    @property
    def tokens(self) -> int:
        """Estimated prompt tokens of ``text()``."""
        return token_size(self.text())


def _field_lines(column: ColumnNode, depth: int) -> list[str]:
    indent = "  " * depth
    notes = ["key"] if column.primary_key else []
    notes += [column.description.rstrip(".")] if column.description else []
    samples = column.samples[:1] if column.type in TIMES else column.samples
    if samples:
        notes.append(f"e.g. {', '.join(samples)}")
    lines = [f"{indent}- {column.path} {column.type}" + (f": {'; '.join(notes)}" if notes else "")]
    vocabulary = column.vocabulary
    if vocabulary is not None:
        label = "values" if vocabulary.source == "documented" else "values seen"
        others = "" if vocabulary.complete else " (others occur too)"
        lines.append(f"{indent}  {label}: {', '.join(vocabulary.values)}{others}")
    for child in column.children:
        lines += _field_lines(child, depth + 1)
    return lines


class EntitySchemas(Frozen):
    """The entities asked for, in full: what ``entity_schema(db, names)`` returns."""

    db_id: str
    entities: tuple[Entity, ...]
    joins: tuple[JoinEdge, ...]  # every join key from or to one of them

    def text(self) -> str:
        return "\n\n".join(self._entity(e) for e in self.entities)

    def _entity(self, entity: Entity) -> str:
        rows = "? rows" if entity.rows is None else f"{entity.rows} rows"
        if len(entity.tables) > 1:
            rows += (
                f" in {len(entity.tables)} tables with these columns: {', '.join(entity.tables)}"
            )
        lines = [f"## {entity.name} ({rows})"] + (
            [entity.description] if entity.description else []
        )
        for column in entity.columns:
            lines += _field_lines(column, 0)
        joins = [j.text(entity.name) for j in self.joins if entity.name in (j.entity, j.ref_entity)]
        if joins:
            lines += ["joins:", *(f"- {j}" for j in dict.fromkeys(joins))]
        return "\n".join(lines)

    @property
    def tokens(self) -> int:
        """Estimated prompt tokens of ``text()``."""
        return token_size(self.text())


def catalog_of(graph: SchemaGraph, settings: CatalogSettings) -> Catalog:
    """Every entity with its ``top_columns`` best-scored columns (ties in column order)."""
    entries = []
    for entity in graph.entities:
        ranked = sorted(entity.columns, key=lambda c: -c.score)[: settings.top_columns]
        joins = graph.joins_of(entity.name)
        others = (j.ref_entity if j.entity == entity.name else j.entity for j in joins)
        targets: dict[str, tuple[str, ...]] = {}
        for column in ranked:
            found = (
                j.ref_entity
                for j in joins
                if j.entity == entity.name
                and (
                    j.column == column.path
                    or j.column.startswith((f"{column.path}.", f"{column.path}["))
                )
            )
            if found := tuple(dict.fromkeys(found)):
                targets[column.path] = found
        entries.append(
            CatalogEntry(
                name=entity.name,
                description=summary(entity.description),
                documented=entity.documented,
                rows=entity.rows,
                tables=entity.tables,
                columns=tuple(ranked),
                hidden=len(entity.columns) - len(ranked),
                joins=tuple(o for o in dict.fromkeys(others) if o != entity.name),
                targets=targets,
            )
        )
    return Catalog(db_id=graph.db_id, entities=tuple(entries), shown_values=settings.catalog_values)


def schemas_of(graph: SchemaGraph, names: Sequence[str]) -> EntitySchemas:
    """The entities ``names`` asks for (``SchemaGraph.find``) with their join keys."""
    entities = graph.find(names)
    asked = {e.name for e in entities}
    joins = tuple(j for j in graph.joins if asked & {j.entity, j.ref_entity})
    return EntitySchemas(db_id=graph.db_id, entities=entities, joins=joins)
