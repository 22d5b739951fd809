"""BIRD (and BIRD mini-dev) on disk:

    <data_dir>/dev.json | mini_dev_sqlite.json
        [{question_id, db_id, question, evidence, SQL, difficulty}]
    <data_dir>/dev_tables.json                  schemas
    <data_dir>/dev_databases/<db_id>/<db_id>.sqlite
    <data_dir>/dev_databases/<db_id>/database_description/<table>.csv   (per-column English)

Difficulty is BIRD's own label (simple / moderate / challenging); evidence is the question's
external-knowledge hint, passed through verbatim.

    >>> bench = load_bird(BenchmarkSpec(name="bird_dev", kind="bird", data_dir=bird_dir))
    >>> bench.tasks[1].question, bench.tasks[1].evidence
    ('What are the names of the French singers?', "French singers refer to Country = 'France'")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eval.errors import BenchmarkDataError
from eval.loaders.common import (
    BenchmarkSpec,
    LoadedBenchmark,
    Question,
    assemble,
    question_fields,
    read_json_list,
    split_files,
)
from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation.bird import descriptions_beside

# split -> (question file, database folder, tables file)
SPLITS: dict[str, tuple[str, str, str]] = {
    "dev": ("dev.json", "dev_databases", "dev_tables.json"),
    "mini_dev": ("mini_dev_sqlite.json", "dev_databases", "dev_tables.json"),
    "train": ("train.json", "train_databases", "train_tables.json"),
}
DIFFICULTIES = ("simple", "moderate", "challenging")


def load_bird(spec: BenchmarkSpec) -> LoadedBenchmark:
    path, databases, tables = split_files(spec, SPLITS, "BIRD")
    records = read_json_list(path)

    def locate(db_id: str) -> DatabaseRef:
        database = databases / db_id / f"{db_id}.sqlite"
        return DatabaseRef(
            db_id=db_id, path=str(database), description_dir=descriptions_beside(database)
        )

    questions = (_question(record, path, i) for i, record in enumerate(records))
    return assemble(spec, questions, locate, questions_file=path, tables_file=tables)


def _question(record: dict[str, Any], path: Path, index: int) -> Question:
    difficulty = record.get("difficulty")
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise BenchmarkDataError(
            f"{path}: question {index} has difficulty {difficulty!r}; "
            f"expected one of {DIFFICULTIES}"
        )
    return Question(
        **question_fields(record, path, index, "SQL"),
        evidence=record.get("evidence") or "",
        difficulty=difficulty,
    )
