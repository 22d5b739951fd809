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
    question_fields,
    read_json_list,
    split_files,
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
    path, databases, tables = split_files(spec, SPLITS, "Spider")
    records = read_json_list(path)

    def locate(db_id: str) -> DatabaseRef:
        # tables.json also documents the database where it carries column_descriptions
        return DatabaseRef(
            db_id=db_id,
            path=str(databases / db_id / f"{db_id}.sqlite"),
            tables_json=str(tables),
        )

    questions = (_question(record, path, i) for i, record in enumerate(records))
    loaded = assemble(spec, questions, locate, questions_file=path, tables_file=tables)
    # Rated after subsetting: the sqlglot path costs ~1 ms a question.
    rated = tuple(
        task.model_copy(update={"difficulty": _hardness(records[task_index(task.task_id)], path)})
        for task in loaded.tasks
    )
    return loaded.model_copy(update={"tasks": rated})


def _question(record: dict[str, Any], path: Path, index: int) -> Question:
    return Question(**question_fields(record, path, index, "query"))


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
