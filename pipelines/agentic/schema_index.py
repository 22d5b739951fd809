"""What the checkers look up in a schema view: tables and columns by name whatever their case,
nested sub-fields by dotted path, documented vocabularies, and the view as sqlglot's schema.

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

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.schema import MappingSchema

from core.types import Frozen
from pipelines.contracts import ColumnInfo, Dialect, ForeignKey, SchemaView, TableInfo
from pipelines.repair.columns import ColumnRepair
from pipelines.schema.documentation.vocabulary import vocabularies

_LISTS = (exp.DataType.Type.ARRAY, exp.DataType.Type.LIST)


def data_type(sql_type: str, dialect: Dialect) -> exp.DataType:
    """The declared type as sqlglot reads it; UNKNOWN for what it cannot read (SQLite accepts
    any word as a type, and none)."""
    try:
        return exp.DataType.build(sql_type or "UNKNOWN", dialect=dialect)
    except (SqlglotError, ValueError):
        return exp.DataType.build("UNKNOWN")


class SchemaIndex(Frozen):
    """A schema view indexed for the checkers (module docstring)."""

    dialect: Dialect
    tables: dict[str, TableInfo]  # lower-cased name -> table
    vocabularies: dict[str, tuple[str, ...]]  # "table.path" lower-cased -> documented labels
    foreign_keys: tuple[ForeignKey, ...] = ()

    @classmethod
    def from_view(cls, view: SchemaView) -> SchemaIndex:
        return cls(
            dialect=view.dialect,
            tables={t.name.lower(): t for t in view.tables},
            vocabularies=vocabularies(view),
            foreign_keys=view.foreign_keys,
        )

    @cached_property
    def column_repair(self) -> ColumnRepair:
        """The adaptive pipeline's schema-grounded column repair over this schema."""
        view = SchemaView(
            db_id="",
            dialect=self.dialect,
            tables=tuple(self.tables.values()),
            foreign_keys=self.foreign_keys,
        )
        return ColumnRepair(view)

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
