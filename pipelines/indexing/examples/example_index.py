"""The global example index: (question skeleton -> SQL) pairs from a training set.

    train_spider.json + tables.json ──load_examples (example_source.py)──► skeletons
        ──► embed skeletons ──► LanceDB table ``examples``
            (question, skeleton, sql, sql_skeleton, db_id, vector)

Once ``scale-analytics index`` has built it from Spider's training set under ``index_root``:

    retriever = ExampleRetriever(index_root)
    hits = retriever.search("how many [TABLE] are there ?", k=15, exclude_db="concert_singer")
    hits[0]
    ──► ExampleHit(question='How many clubs are there?', skeleton='how many [TABLE] are there ?',
                   sql='SELECT count(*) FROM club', db_id='riding_club', score=1.0)

``score`` is the cosine similarity of the skeletons. ``threshold`` follows the source design's
convention (a Chroma-style squared L2 distance between unit vectors, ``2 - 2*cosine``): hits
farther than it are dropped, so 1.5 keeps cosine >= 0.25. ``exclude_db`` drops the asking
question's own database (the cross-database setting of Spider).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa

from pipelines.contracts import ExampleHit
from pipelines.indexing.builder.reports import EXAMPLES_NAME
from pipelines.indexing.embedder import DIMENSION, embed
from pipelines.indexing.errors import IndexNotBuilt
from pipelines.indexing.store import VersionedStore

EXAMPLE_TABLE = "examples"
LANCE_DIR = "lance"
RESULT_COLUMNS = ["question", "skeleton", "sql", "db_id"]


def write_example_table(
    version_dir: Path, examples: list[dict[str, str]], batch_size: int = 128
) -> None:
    vectors = embed([e["skeleton"] for e in examples], batch_size=batch_size)
    columns = {
        key: [e[key] for e in examples]
        for key in ("question", "skeleton", "sql", "sql_skeleton", "db_id")
    }
    columns["vector"] = pa.FixedSizeListArray.from_arrays(
        pa.array(vectors.ravel(), pa.float32()), DIMENSION
    )
    lancedb.connect(str(version_dir / LANCE_DIR)).create_table(
        EXAMPLE_TABLE, data=pa.table(columns)
    )


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class ExampleRetriever:
    """Nearest training examples by skeleton similarity, across databases."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._opened: tuple[str, Any] | None = None

    def _table(self):
        store = VersionedStore(self.root, "examples", EXAMPLES_NAME)
        manifest = store.current()
        if manifest is None:
            raise IndexNotBuilt("the example index", str(self.root))
        if self._opened is None or self._opened[0] != manifest.version:
            db = lancedb.connect(str(store.base / manifest.version / LANCE_DIR))
            self._opened = (manifest.version, db.open_table(EXAMPLE_TABLE))
        return self._opened[1]

    def search(
        self,
        skeleton: str,
        k: int = 15,
        exclude_db: str | None = None,
        threshold: float | None = None,
    ) -> list[ExampleHit]:
        """The ``k`` nearest examples; raises ``IndexNotBuilt`` before the first build."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        query = self._table().search(embed([skeleton])[0]).distance_type("cosine")
        if exclude_db is not None:
            query = query.where(f"db_id != {_sql_string(exclude_db)}", prefilter=True)
        rows = query.select(RESULT_COLUMNS + ["_distance"]).limit(k).to_list()
        out = []
        for row in rows:
            cosine = 1.0 - row["_distance"]
            if threshold is not None and 2.0 - 2.0 * cosine > threshold:
                continue
            out.append(ExampleHit(**{key: row[key] for key in RESULT_COLUMNS}, score=cosine))
        return out
