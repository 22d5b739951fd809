"""L0 offline indexes: per-database cell values, the global example index, schema views.

    scale-analytics index benchmark=... ──► build_all(dbs, settings)
    ask / eval / demo                   ──► ensure_indexes(cfg, dbs): missing or stale ones only
        <index root>/databases/<db_id>/  schema.json + LanceDB cells (vector + BM25)
        <index root>/examples/spider_train/  LanceDB (question skeleton -> SQL)

    CellRetriever(root).search(db_id, query, k=5, mode="hybrid") -> [CellHit]
    ExampleRetriever(root).search(skeleton, k=15, exclude_db=db_id) -> [ExampleHit]
    load_schema_view(root, db_id) -> SchemaView

Names are resolved on first use (PEP 562), so importing the package (e.g. for the CLI) does
not load lancedb or torch until something needs them.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "BuildReport": "pipelines.indexing.builder.reports",
    "CellRetriever": "pipelines.indexing.cell_values.cell_index",
    "DatabaseChangedDuringBuild": "pipelines.indexing.errors",
    "EmbeddingModelUnavailable": "pipelines.indexing.errors",
    "ExampleRetriever": "pipelines.indexing.examples.example_index",
    "ExampleSourceError": "pipelines.indexing.errors",
    "IndexNotBuilt": "pipelines.indexing.errors",
    "IndexSettings": "pipelines.indexing.settings",
    "IndexingError": "pipelines.indexing.errors",
    "RetrievalStatus": "pipelines.indexing.builder.ensure",
    "SchemaWords": "pipelines.indexing.examples.question_skeleton",
    "build_all": "pipelines.indexing.builder.runner",
    "build_database": "pipelines.indexing.builder.build",
    "build_examples": "pipelines.indexing.builder.build",
    "ensure_indexes": "pipelines.indexing.builder.ensure",
    "load_schema_view": "pipelines.indexing.builder.build",
    "skeletonise": "pipelines.indexing.examples.question_skeleton",
    "sql_skeleton": "pipelines.indexing.examples.sql_skeleton",
    "string_literals": "pipelines.indexing.examples.sql_skeleton",
}

__all__ = [
    "BuildReport",
    "CellRetriever",
    "DatabaseChangedDuringBuild",
    "EmbeddingModelUnavailable",
    "ExampleRetriever",
    "ExampleSourceError",
    "IndexNotBuilt",
    "IndexSettings",
    "IndexingError",
    "RetrievalStatus",
    "SchemaWords",
    "build_all",
    "build_database",
    "build_examples",
    "ensure_indexes",
    "load_schema_view",
    "skeletonise",
    "sql_skeleton",
    "string_literals",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipelines.indexing' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
