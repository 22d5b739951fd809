"""Declared column types, normalised to the short vocabulary the catalog shows.

    text  integer  decimal  boolean  date  timestamp  time  interval  blob  any
    list<T>  struct<field, ...>  map<K, V>

A declared type is parsed by sqlglot in the database's dialect; a type sqlglot does not know
(SQLite accepts any word: ``year``, ``money``) falls back to SQLite's affinity rules
(https://sqlite.org/datatype3.html#determination_of_column_affinity), and an empty SQLite type,
which stores anything, is ``any``. A struct lists its fields' names only: each sub-field is a
column of its own, with its own type.

    >>> normalise_type('STRUCT("type" VARCHAR, display_id VARCHAR)[]', "duckdb")
    'list<struct<type, display_id>>'
    >>> normalise_type("varchar(40)", "sqlite"), normalise_type("number(10)", "sqlite")
    ('text', 'decimal')
    >>> normalise_type("year", "sqlite"), normalise_type("", "sqlite")
    ('decimal', 'any')
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ParseError

DType = exp.DataType.Type

# (types, short name); first match wins. DATETIME is SQLite's and MySQL's timestamp.
_SCALARS: tuple[tuple[frozenset, str], ...] = (
    (frozenset(exp.DataType.TEXT_TYPES | {DType.ENUM, DType.UUID, DType.JSON}), "text"),
    (frozenset(exp.DataType.INTEGER_TYPES), "integer"),
    (frozenset(exp.DataType.REAL_TYPES), "decimal"),
    (frozenset({DType.BOOLEAN}), "boolean"),
    (frozenset({DType.DATE, DType.DATE32}), "date"),
    (frozenset({DType.TIME, DType.TIMETZ}), "time"),
    (frozenset(exp.DataType.TEMPORAL_TYPES), "timestamp"),
    (frozenset({DType.INTERVAL}), "interval"),
    (frozenset(exp.DataType.BINARY_TYPES), "blob"),
)


def _affinity(declared: str) -> str:
    """SQLite's type affinity of a declared type sqlglot cannot read."""
    upper = declared.upper()
    if not upper.strip():
        return "any"
    if "INT" in upper:
        return "integer"
    if any(marker in upper for marker in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in upper:
        return "blob"
    return "decimal"  # REAL and NUMERIC affinity alike: a number


def _short(data_type: exp.DataType) -> str:
    kind = data_type.this
    if kind in exp.DataType.ARRAY_TYPES:
        inner = [e for e in data_type.expressions if isinstance(e, exp.DataType)]
        return f"list<{_short(inner[0]) if inner else 'any'}>"
    if kind == DType.STRUCT:
        fields = [e.name for e in data_type.expressions if isinstance(e, exp.ColumnDef)]
        return f"struct<{', '.join(fields)}>"
    if kind == DType.MAP:
        key, value = (e for e in data_type.expressions if isinstance(e, exp.DataType))
        return f"map<{_short(key)}, {_short(value)}>"
    return next((name for kinds, name in _SCALARS if kind in kinds), "")


def normalise_type(declared: str, dialect: str) -> str:
    """The short form of a declared type (see the module docstring)."""
    try:
        parsed = exp.DataType.build(declared, dialect=dialect, udt=True)
    except (ParseError, ValueError):
        parsed = None
    short = _short(parsed) if parsed is not None else ""
    return short or _affinity(declared)


def list_depth(normal_type: str) -> int:
    """How many lists wrap a normalised type (``list<list<struct<a>>>``: 2); a path enters
    each with ``[]``."""
    depth = 0
    while normal_type.startswith("list<", depth * len("list<")):
        depth += 1
    return depth
