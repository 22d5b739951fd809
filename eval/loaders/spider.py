"""Spider 1.0 on disk (as released):

    <data_dir>/dev.json | train_spider.json   [{db_id, question, query, sql (parse), ...}]
    <data_dir>/tables.json                    schemas
    <data_dir>/database/<db_id>/<db_id>.sqlite

Spider has no difficulty field: each question gets its Spider hardness (easy / medium / hard /
extra) from the official rules applied to its ``sql`` parse, or from a sqlglot reading of the
query when the file carries no parse (see :mod:`eval.loaders.spider_hardness`).

    >>> bench = load_spider(BenchmarkSpec(name="spider_dev", kind="spider", data_dir=spider_dir))
    >>> bench.tasks[0].task_id, bench.tasks[0].question, bench.tasks[0].difficulty
    ('spider_dev:0', 'How many singers do we have?', 'easy')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlglot

from eval.errors import BenchmarkDataError
from eval.loaders.common import (
    BenchmarkSpec,
    LoadedBenchmark,
    Question,
    assemble,
    read_json_list,
    required,
    task_index,
)
from eval.loaders.spider_hardness import hardness_from_parse
from pipelines.contracts import DatabaseRef
from pipelines.sql_hardness import Hardness, hardness_from_sql

# split -> (question file, database folder, tables file)
SPLITS: dict[str, tuple[str, str, str]] = {
    "dev": ("dev.json", "database", "tables.json"),
    "train": ("train_spider.json", "database", "tables.json"),
    "test": ("test.json", "test_database", "test_tables.json"),
}


def load_spider(spec: BenchmarkSpec) -> LoadedBenchmark:
    if spec.split not in SPLITS:
        raise BenchmarkDataError(
            f"unknown Spider split {spec.split!r}; expected one of {sorted(SPLITS)}"
        )
    default_file, database_dir, tables_name = SPLITS[spec.split]
    root = Path(spec.data_dir).resolve()
    path = root / (spec.file or default_file)
    records = read_json_list(path)

    def locate(db_id: str) -> DatabaseRef:
        # tables.json also documents the database where it carries column_descriptions
        return DatabaseRef(
            db_id=db_id,
            path=str(root / database_dir / db_id / f"{db_id}.sqlite"),
            tables_json=str(root / tables_name),
        )

    questions = (_question(record, path, i) for i, record in enumerate(records))
    loaded = assemble(spec, questions, locate, questions_file=path, tables_file=root / tables_name)
    # Rated after subsetting: the sqlglot path costs ~1 ms a question.
    rated = tuple(
        task.model_copy(update={"difficulty": _hardness(records[task_index(task.task_id)], path)})
        for task in loaded.tasks
    )
    return loaded.model_copy(update={"tasks": rated})


def _question(record: dict[str, Any], path: Path, index: int) -> Question:
    return Question(
        index=index,
        db_id=required(record, "db_id", path, index),
        question=required(record, "question", path, index),
        gold_sql=required(record, "query", path, index),
    )


def _hardness(record: dict[str, Any], path: Path) -> Hardness | None:
    parse = record.get("sql")
    if isinstance(parse, dict):
        try:
            return hardness_from_parse(parse)
        except (KeyError, IndexError, TypeError) as exc:
            raise BenchmarkDataError(
                f"{path}: malformed 'sql' parse for {record['query']!r}"
            ) from exc
    try:
        return hardness_from_sql(record["query"])
    except sqlglot.errors.SqlglotError:  # still a task; the gold query's fate shows at scoring
        return None
