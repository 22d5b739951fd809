"""The global example index: (question skeleton -> SQL) pairs from a training set.

    train_spider.json + tables.json ──► skeletonise(question, schema words, gold literals)
        ──► embed skeletons ──► LanceDB table ``examples``
            (question, skeleton, sql, sql_skeleton, db_id, vector)

    >>> retriever = ExampleRetriever(index_root)
    >>> hits = retriever.search("how many [TABLE] are there ?", k=15, exclude_db="concert_singer")
    >>> hits[0]
    ExampleHit(question='How many clubs are there?', skeleton='how many [TABLE] are there ?',
               sql='SELECT count(*) FROM club', db_id='riding_club', score=1.0)

``score`` is the cosine similarity of the skeletons. ``threshold`` follows the source design's
convention (a Chroma-style squared L2 distance between unit vectors, ``2 - 2*cosine``): hits
farther than it are dropped, so 1.5 keeps cosine >= 0.25. ``exclude_db`` drops the asking
question's own database (the cross-database setting of Spider).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa

from pipelines.contracts import ExampleHit
from pipelines.indexing.embedder import DIMENSION, embed
from pipelines.indexing.errors import ExampleSourceError, IndexNotBuilt
from pipelines.indexing.question_skeleton import EMPTY, SchemaWords, skeletonise
from pipelines.indexing.sql_skeleton import sql_skeleton, string_literals
from pipelines.indexing.store import VersionedStore

EXAMPLE_TABLE = "examples"
LANCE_DIR = "lance"
SKELETONISER_VERSION = 1  # bump when skeletonise() changes: the example index is rebuilt
RESULT_COLUMNS = ["question", "skeleton", "sql", "db_id"]


def _read_json(path: str | None, what: str) -> Any:
    if not path:
        raise ExampleSourceError(f"no {what} configured (index.examples)")
    file = Path(path)
    if not file.is_file():
        raise ExampleSourceError(f"{what} not found: {file}")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExampleSourceError(f"{what} is not valid JSON: {file}: {exc}") from exc


def source_fingerprint(train_file: str | None, tables_file: str | None) -> str:
    h = hashlib.blake2b(digest_size=16)
    for path in (train_file, tables_file):
        if path and Path(path).is_file():
            h.update(Path(path).read_bytes())
        h.update(b"|")
    h.update(f"skeletoniser={SKELETONISER_VERSION}".encode())
    return h.hexdigest()


def load_examples(train_file: str | None, tables_file: str | None) -> list[dict[str, str]]:
    """Training records with their skeletons; raises ``ExampleSourceError`` on a bad file."""
    records = _read_json(train_file, "training questions file")
    tables = _read_json(tables_file, "tables file") if tables_file else []
    words = {entry["db_id"]: SchemaWords.from_spider_tables(entry) for entry in tables}
    out = []
    for i, record in enumerate(records):
        try:
            question, sql, db_id = record["question"], record["query"], record["db_id"]
        except (KeyError, TypeError):
            raise ExampleSourceError(f"{train_file}: record {i} lacks question/query/db_id") from None
        out.append(
            {
                "question": question,
                "skeleton": skeletonise(question, words.get(db_id, EMPTY), string_literals(sql)),
                "sql": sql,
                "sql_skeleton": sql_skeleton(sql) or "",
                "db_id": db_id,
            }
        )
    return out


def write_example_table(version_dir: Path, examples: list[dict[str, str]], batch_size: int = 128) -> None:
    vectors = embed([e["skeleton"] for e in examples], batch_size=batch_size)
    columns = {key: [e[key] for e in examples] for key in ("question", "skeleton", "sql", "sql_skeleton", "db_id")}
    columns["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), DIMENSION)
    lancedb.connect(str(version_dir / LANCE_DIR)).create_table(EXAMPLE_TABLE, data=pa.table(columns))


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class ExampleRetriever:
    """Nearest training examples by skeleton similarity, across databases."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._opened: tuple[str, Any] | None = None

    def _table(self):
        store = VersionedStore(self.root, "examples", "spider_train")
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
