"""The cell-value index of one database: LanceDB table of distinct TEXT values, vectors + BM25.

    [CellValue] ──embed (MiniLM)──► LanceDB table ``cells`` (table, column, value, vector)
                                     + native FTS (BM25) index on ``value``

Once ``scale-analytics index`` has built the index of ``concert_singer`` under ``index_root``:

    retriever = CellRetriever(index_root)
    retriever.search("concert_singer", "netherland", k=3, mode="hybrid")
    ──► [CellHit(table='singer', column='Country', value='Netherlands', score=0.0328,
                 source='hybrid'), ...]

Scores by mode: ``vector`` — cosine similarity; ``bm25`` — the BM25 score; ``hybrid`` —
reciprocal-rank fusion of both (LanceDB's RRF reranker), ties broken by cosine similarity.
``threshold`` is a minimum: cosine similarity for ``vector``; BM25 score for ``bm25``; for
``hybrid``, a hit passes when it matched lexically or its cosine similarity reaches it.
Search is exhaustive (no ANN index): cell tables here hold at most tens of thousands of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS
from lancedb.rerankers import RRFReranker

from pipelines.contracts import CellHit
from pipelines.indexing.cell_values.cells import CellValue
from pipelines.indexing.embedder import DIMENSION, embed
from pipelines.indexing.errors import IndexNotBuilt
from pipelines.indexing.store import VersionedStore

CELL_TABLE = "cells"
LANCE_DIR = "lance"
Mode = Literal["vector", "bm25", "hybrid"]
RESULT_COLUMNS = ["table", "column", "value", "vector"]
OVERFETCH = 4  # candidates per side before fusion / de-duplication, as a multiple of k


def write_cell_table(version_dir: Path, values: Sequence[CellValue], batch_size: int = 128) -> None:
    """Embed the values and write the LanceDB table with its FTS index into ``version_dir``."""
    vectors = embed([v.value for v in values], batch_size=batch_size)
    data = pa.table(
        {
            "table": [v.table for v in values],
            "column": [v.column for v in values],
            "value": [v.value for v in values],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.ravel(), pa.float32()), DIMENSION
            ),
        }
    )
    table = lancedb.connect(str(version_dir / LANCE_DIR)).create_table(CELL_TABLE, data=data)
    table.create_index("value", config=FTS())


class CellRetriever:
    """Searches the published cell index of each database under an index root (thread-safe reads)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._tables: dict[tuple[str, str], object | None] = {}

    def _table(self, db_id: str):
        store = VersionedStore(self.root, "databases", db_id)
        manifest = store.current()
        if manifest is None:
            raise IndexNotBuilt(f"database {db_id!r}", str(self.root))
        key = (db_id, manifest.version)
        if key not in self._tables:
            lance_dir = store.base / manifest.version / LANCE_DIR
            # A database without indexable text values has no table: searches return nothing.
            self._tables[key] = (
                lancedb.connect(str(lance_dir)).open_table(CELL_TABLE)
                if lance_dir.exists()
                else None
            )
        return self._tables[key]

    def search(
        self,
        db_id: str,
        query: str,
        k: int = 5,
        mode: Mode = "hybrid",
        threshold: float | None = None,
    ) -> list[CellHit]:
        """The ``k`` best cell values for ``query``; raises ``IndexNotBuilt`` for an unknown db."""
        _check(k, mode)
        table = self._table(db_id)
        if table is None or not query.strip():
            return []
        vector = None if mode == "bm25" else embed([query])[0]
        return _search(table, query, vector, k, mode, threshold)

    def search_many(
        self,
        db_id: str,
        queries: Sequence[str],
        k: int = 5,
        mode: Mode = "hybrid",
        threshold: float | None = None,
    ) -> list[CellHit]:
        """Search each query (embedded in one batch) and keep the ``k`` best distinct values.

        A value found by several queries keeps its best score.
        """
        _check(k, mode)
        table = self._table(db_id)
        queries = [q for q in dict.fromkeys(queries) if q.strip()]
        if table is None or not queries:
            return []
        vectors = [None] * len(queries) if mode == "bm25" else list(embed(queries))
        best: dict[tuple[str, str, str], CellHit] = {}
        for query, vector in zip(queries, vectors):
            for hit in _search(table, query, vector, k, mode, threshold):
                key = (hit.table, hit.column, hit.value)
                if key not in best or hit.score > best[key].score:
                    best[key] = hit
        return sorted(best.values(), key=lambda h: h.score, reverse=True)[:k]


def _check(k: int, mode: str) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if mode not in ("vector", "bm25", "hybrid"):
        raise ValueError(f"mode must be vector, bm25 or hybrid, got {mode!r}")


def _hit(row: dict, score: float, mode: Mode) -> CellHit:
    return CellHit(
        table=row["table"],
        column=row["column"],
        value=row["value"],
        score=float(score),
        source=mode,
    )


def _search(
    table, query: str, vector: np.ndarray | None, k: int, mode: Mode, threshold: float | None
) -> list[CellHit]:
    if mode == "bm25":
        rows = (
            table.search(query, query_type="fts")
            .select(RESULT_COLUMNS + ["_score"])
            .limit(k)
            .to_list()
        )
        return [
            _hit(row, row["_score"], mode)
            for row in rows
            if threshold is None or row["_score"] >= threshold
        ]
    if mode == "vector":
        rows = (
            table.search(vector)
            .distance_type("cosine")
            .select(RESULT_COLUMNS + ["_distance"])
            .limit(k)
            .to_list()
        )
        hits = [_hit(row, 1.0 - row["_distance"], mode) for row in rows]
        return [h for h in hits if threshold is None or h.score >= threshold]
    rows = (
        table.search(query_type="hybrid")
        .vector(vector)
        .text(query)
        .distance_type("cosine")
        .rerank(RRFReranker(return_score="all"))
        .select(RESULT_COLUMNS)
        .limit(k * OVERFETCH)
        .to_list()
    )
    scored = []
    for row in rows:
        cosine = float(np.dot(vector, np.asarray(row["vector"], dtype=np.float32)))
        lexical = row.get("_score") is not None
        if threshold is None or lexical or cosine >= threshold:
            scored.append((row["_relevance_score"], cosine, row))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [_hit(row, relevance, mode) for relevance, _, row in scored[:k]]
