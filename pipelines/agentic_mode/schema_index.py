"""What the repairs and checks look up in a schema view: tables and columns by name whatever
their case, nested sub-fields by dotted path, documented vocabularies, a server's function names,
the view as sqlglot's schema, its join graph, and a repair's engine built on the view and graph once (``bound``).

    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> links = ColumnInfo(name="links", type="STRUCT(type VARCHAR)[]",
    ...                    children=(ColumnInfo(name="links.type", type="VARCHAR"),))
    >>> index = SchemaIndex.from_view(SchemaView(db_id="w", dialect="duckdb", tables=(
    ...     TableInfo(name="Tickets", columns=(ColumnInfo(name="Stage", type="VARCHAR"), links)),)))
    >>> index.column("tickets", "STAGE").name, index.column("tickets", "links.type").type
    ('Stage', 'VARCHAR')
    >>> index.is_list(index.column("tickets", "links"))
    True
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Protocol, TypeVar

from pydantic import PrivateAttr
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.schema import MappingSchema

from core.types import Frozen
from pipelines.contracts import ColumnInfo, Dialect, SchemaView, TableInfo
from pipelines.schema.documentation.vocabulary import vocabularies
from pipelines.schema.joins import JoinGraph, join_graph

_LISTS = (exp.DataType.Type.ARRAY, exp.DataType.Type.LIST)


class _OnSchema(Protocol):
    def __init__(self, view: SchemaView, graph: JoinGraph) -> None: ...


Engine = TypeVar("Engine", bound=_OnSchema)


def data_type(sql_type: str, dialect: Dialect) -> exp.DataType:
    """The declared type as sqlglot reads it; UNKNOWN for what it cannot read (SQLite accepts
    any word as a type, and none)."""
    try:
        return exp.DataType.build(sql_type or "UNKNOWN", dialect=dialect)
    except (SqlglotError, ValueError):
        return exp.DataType.build("UNKNOWN")


class SchemaIndex(Frozen):
    """A schema view indexed for the repairs and checks (module docstring)."""

    view: SchemaView
    tables: dict[str, TableInfo]  # lower-cased name -> table
    vocabularies: dict[str, tuple[str, ...]]  # "table.path" lower-cased -> documented labels
    _engines: dict[type, Any] = PrivateAttr(default_factory=dict)

    @classmethod
    def from_view(cls, view: SchemaView) -> SchemaIndex:
        return cls(
            view=view,
            tables={t.name.lower(): t for t in view.tables},
            vocabularies=vocabularies(view),
        )

    @property
    def dialect(self) -> Dialect:
        return self.view.dialect

    @cached_property
    def functions(self) -> frozenset[str]:
        """The server's function names (``SchemaView.functions``); empty: the installed engine's
        are asked (``pipelines/agentic_mode/functions.py``)."""
        return frozenset(self.view.functions)

    @cached_property
    def join_graph(self) -> JoinGraph:
        """Declared and inferred keys, shared by the repairs that join or follow a key."""
        return join_graph(self.view)

    def bound(self, engine: type[Engine]) -> Engine:
        """``engine(view, join_graph)``, built once per schema (``ColumnRepair``, ``JoinRepair``)."""
        if engine not in self._engines:
            self._engines[engine] = engine(self.view, self.join_graph)
        return self._engines[engine]

    def table(self, name: str) -> TableInfo | None:
        return self.tables.get(name.lower())

    def column(self, table: str, path: str) -> ColumnInfo | None:
        """The column or sub-field at dotted ``path`` of ``table`` (any case), or None."""
        found = self.table(table)
        if found is None:
            return None
        level, wanted = found.columns, ""
        column = None
        for part in path.lower().split("."):
            wanted = f"{wanted}.{part}" if wanted else part
            column = next((c for c in level if c.name.lower() == wanted), None)
            if column is None:
                return None
            level = column.children
        return column

    def vocabulary(self, table: str, path: str) -> tuple[str, ...]:
        """The labels documented for ``table.path`` (empty when none are)."""
        return self.vocabularies.get(f"{table}.{path}".lower(), ())

    def is_list(self, column: ColumnInfo) -> bool:
        return data_type(column.type, self.dialect).is_type(*_LISTS)

    @cached_property
    def sqlglot_schema(self) -> MappingSchema:
        """The tables of the main schema with their columns' types, for qualify."""
        mapping = {
            t.name: {c.name: data_type(c.type, self.dialect) for c in t.columns}
            for t in self.tables.values()
            if "." not in t.name  # another schema's table: its columns go unchecked
        }
        return MappingSchema(mapping, dialect=self.dialect)
