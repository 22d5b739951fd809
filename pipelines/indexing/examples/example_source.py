"""The training side of the example index: read Spider-format questions and skeletonise them.

    train_spider.json + tables.json ──► [{question, skeleton, sql, sql_skeleton, db_id}]

Skeletons mask the gold SQL's string literals, numbers and the question's schema words
(``question_skeleton.skeletonise``); ``source_fingerprint`` changes when either file or the
skeletoniser changes, which rebuilds the example index.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pipelines.indexing.errors import ExampleSourceError
from pipelines.indexing.examples.question_skeleton import EMPTY, SchemaWords, skeletonise
from pipelines.indexing.examples.sql_skeleton import sql_skeleton, string_literals

SKELETONISER_VERSION = 1  # bump when skeletonise() changes: the example index is rebuilt


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
            raise ExampleSourceError(
                f"{train_file}: record {i} lacks question/query/db_id"
            ) from None
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
