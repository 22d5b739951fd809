"""L0 offline indexes: per-database cell values, the global example index, schema views.

    scale-analytics index benchmark=... ──► build_all(dbs, settings)
        <index root>/databases/<db_id>/  schema.json + LanceDB cells (vector + BM25)
        <index root>/examples/spider_train/  LanceDB (question skeleton -> SQL)

    CellRetriever(root).search(db_id, query, k=5, mode="hybrid") -> [CellHit]
    ExampleRetriever(root).search(skeleton, k=15, exclude_db=db_id) -> [ExampleHit]
    load_schema_view(root, db_id) -> SchemaView
"""

from pipelines.indexing.build import BuildReport, build_database, build_examples, load_schema_view
from pipelines.indexing.cell_index import CellRetriever
from pipelines.indexing.errors import (
    DatabaseChangedDuringBuild,
    EmbeddingModelUnavailable,
    ExampleSourceError,
    IndexingError,
    IndexNotBuilt,
)
from pipelines.indexing.example_index import ExampleRetriever
from pipelines.indexing.question_skeleton import SchemaWords, skeletonise
from pipelines.indexing.runner import build_all
from pipelines.indexing.settings import IndexSettings
from pipelines.indexing.sql_skeleton import sql_skeleton, string_literals

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
    "SchemaWords",
    "build_all",
    "build_database",
    "build_examples",
    "load_schema_view",
    "skeletonise",
    "sql_skeleton",
    "string_literals",
]
