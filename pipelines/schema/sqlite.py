"""SQLite: read tables, keys and sample values from a read-only connection.

    conn ──► sqlite_master ──► PRAGMA table_info / foreign_key_list ──► [TableInfo], [ForeignKey]

Values are read as raw bytes (``CAST(x AS BLOB)``) so a cell holding invalid UTF-8 never
aborts a scan: samples decode with replacement characters, the cell index decides per value.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pipelines.contracts import ColumnInfo, ForeignKey, TableInfo

SAMPLE_CHARS = 60  # a sample longer than this is cut for display

# SQLite's affinity rules (https://sqlite.org/datatype3.html#determination_of_column_affinity):
# a declared type containing one of these has TEXT affinity; an empty type can hold anything.
TEXT_AFFINITY_MARKERS = ("CHAR", "CLOB", "TEXT")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def has_text_affinity(declared_type: str) -> bool:
    upper = declared_type.upper()
    return upper == "" or any(marker in upper for marker in TEXT_AFFINITY_MARKERS)


def _decode_sample(raw: Any) -> str:
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def table_names(conn: Any) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY rowid"
    ).fetchall()
    return [row[0] for row in rows]


def leaf_query(table: TableInfo, path: str) -> tuple[str, str, str]:
    """``(FROM source, expression, declared type)`` of a column, as duckdb.py's for a nested
    path (SQLite columns are flat)."""
    column = next((c for c in table.columns if c.name == path), None)
    if column is None:
        raise KeyError(f"{table.name} has no column {path!r}")
    return quote(table.name), quote(path), column.type


def sample_values(conn: Any, table: str, column: str, n: int) -> tuple[str, ...]:
    """Up to ``n`` distinct non-null, non-blob values, in storage order."""
    if n <= 0:
        return ()
    col = quote(column)
    rows = conn.execute(
        f"SELECT DISTINCT CAST({col} AS BLOB) FROM {quote(table)} "
        f"WHERE {col} IS NOT NULL AND typeof({col}) != 'blob' LIMIT ?",
        (n,),
    ).fetchall()
    return tuple(_decode_sample(row[0]) for row in rows)


def read_table(conn: Any, table: str, *, samples: int) -> TableInfo:
    columns = []
    for _cid, name, declared, _notnull, _default, pk in conn.execute(
        f"PRAGMA table_info({quote(table)})"
    ).fetchall():
        columns.append(
            ColumnInfo(
                name=name,
                type=declared or "",
                samples=sample_values(conn, table, name, samples),
                primary_key=bool(pk),
            )
        )
    (row_count,) = conn.execute(f"SELECT COUNT(*) FROM {quote(table)}").fetchone()
    return TableInfo(name=table, columns=tuple(columns), row_count=row_count)


def _resolve(names: list[str], wanted: str | None) -> str | None:
    """The real spelling of ``wanted`` among ``names`` (SQLite names are case-insensitive)."""
    if wanted is None:
        return None
    return next((name for name in names if name.lower() == wanted.lower()), None)


def foreign_keys(conn: Any, tables: list[TableInfo]) -> list[ForeignKey]:
    """Declared foreign keys whose ends exist; an omitted target column means the target's PK."""
    by_name = {t.name.lower(): t for t in tables}
    out: list[ForeignKey] = []
    for table in tables:
        rows = conn.execute(f"PRAGMA foreign_key_list({quote(table.name)})").fetchall()
        for row in rows:
            ref_table_name, source, target = row[2], row[3], row[4]
            ref = by_name.get(str(ref_table_name).lower())
            column = _resolve([c.name for c in table.columns], source)
            if ref is None or column is None:
                continue  # dangling declaration (Spider has a few): nothing to join on
            ref_columns = [c.name for c in ref.columns]
            if target is None:
                pks = [c.name for c in ref.columns if c.primary_key]
                ref_column = pks[0] if len(pks) == 1 else None
            else:
                ref_column = _resolve(ref_columns, target)
            if ref_column is None:
                continue
            out.append(
                ForeignKey(
                    table=table.name, column=column, ref_table=ref.name, ref_column=ref_column
                )
            )
    return list(dict.fromkeys(out))


def read_schema(conn: Any, *, samples: int) -> tuple[list[TableInfo], list[ForeignKey]]:
    tables = [read_table(conn, name, samples=samples) for name in table_names(conn)]
    return tables, foreign_keys(conn, tables)


def text_columns(table: TableInfo) -> list[str]:
    """Columns that may hold text: declared with TEXT affinity (or no type)."""
    return [c.name for c in table.columns if has_text_affinity(c.type)]


def distinct_text_values(
    conn: Any, table: TableInfo, column: str, *, limit: int, max_chars: int
) -> Iterator[bytes]:
    """Distinct TEXT values of one column as raw bytes, most frequent first, at most ``limit``."""
    col = quote(column)
    cursor = conn.execute(
        f"SELECT CAST({col} AS BLOB) AS v, COUNT(*) AS n FROM {quote(table.name)} "
        f"WHERE typeof({col}) = 'text' AND length({col}) BETWEEN 1 AND ? "
        f"GROUP BY v ORDER BY n DESC, v LIMIT ?",
        (max_chars, limit),
    )
    for raw, _count in cursor:
        yield bytes(raw)
