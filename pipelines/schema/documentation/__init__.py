"""A database's own documentation — what its tables and columns mean and how values are stored —
from every source it may come in, merged, for the schema view, the linking step and the prompts.

    DatabaseRef ──► yaml_file    <stem>.yml / schema.yml beside the file (dbt or plain)
                ──► comments     COMMENT ON TABLE / COLUMN (DuckDB's catalog)
                ──► enum_types   the labels of a DuckDB ENUM column or sub-field
                ──► tables_json  column_descriptions / table_descriptions of a Spider-style entry
                ──► bird_csv     database_description/<table>.csv (BIRD)
                ──► SchemaDocs   (per field, the first source in that order wins)

    >>> docs = load_documentation(db)        # concert_singer with a BIRD singer.csv
    >>> docs.sources, docs.documented()
    (('bird_csv',), 3)
    >>> docs.column("singer", "Country")
    ColumnDoc(description='country of citizenship', values='', label='nationality')
    >>> docs.column("singer", "Country").note("Country", table="singer")
    'country of citizenship'
    >>> ColumnDoc(description="Country of the singer").note("Country", table="singer")
    ''

Each source is one module with ``NAME`` and ``read(db) -> SchemaDocs``; a source that finds
nothing, or a file it cannot read (logged), documents nothing. Reads are cached per database and
file versions, so a pipeline asks as often as it likes.
"""

from __future__ import annotations

import functools
from pathlib import Path

from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation import bird, comments, enum_types, tables_json, yaml_file
from pipelines.schema.documentation.model import ColumnDoc, SchemaDocs, TableDoc

# Precedence: what the database's owner wrote beside it, then its catalog, then benchmark files.
SOURCES = (yaml_file, comments, enum_types, tables_json, bird)


def versions(db: DatabaseRef) -> tuple[float, ...]:
    """Modification times of the database and of every file a source would read (0 where
    absent): what a cache of anything read from them is keyed by."""
    paths = [Path(db.path), *yaml_file.candidates(db), *tables_json.candidates(db)]
    if db.description_dir:
        paths.append(Path(db.description_dir))
    return tuple(p.stat().st_mtime if p.exists() else 0.0 for p in paths)


@functools.lru_cache(maxsize=64)
def _load(db: DatabaseRef, versions: tuple[float, ...]) -> SchemaDocs:
    docs = SchemaDocs()
    for source in SOURCES:
        docs = docs.or_else(source.read(db))
    return docs


def load_documentation(db: DatabaseRef) -> SchemaDocs:
    """Every source's documentation of ``db``, merged (see the module docstring)."""
    return _load(db, versions(db))


__all__ = ["ColumnDoc", "SchemaDocs", "TableDoc", "SOURCES", "load_documentation", "versions"]
