"""The embedded enterprise work-item benchmark: built on first use, then read from its layout.

    <data_dir>/dev.json                                       [{question_id, db_id, question,
                                                               evidence, SQL, difficulty, sds_total,
                                                               construct, ...}]
    <data_dir>/dev_databases/workitems/workitems.duckdb       documented by COMMENT ON

``eval.enterprise.build_enterprise`` writes it (a no-op when it is already there). Each task
carries its BIRD-style difficulty, its SDS total (``eval/sds.py``) and, on a floor question, the
construct it exercises (``FloorConstruct``, ``eval/enterprise/questions.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from eval.loaders.common import (
    BenchmarkSpec,
    LoadedBenchmark,
    Question,
    assemble,
    question_fields,
    read_json_list,
    required,
)
from pipelines.contracts import DatabaseRef


def load_enterprise(spec: BenchmarkSpec) -> LoadedBenchmark:
    from eval.enterprise import build_enterprise  # the generator pulls in more than loading needs

    root = Path(spec.data_dir).resolve()
    build_enterprise(root, progress=sys.stderr.isatty())
    path = root / (spec.file or "dev.json")
    records = read_json_list(path)

    def locate(db_id: str) -> DatabaseRef:
        database = root / "dev_databases" / db_id / f"{db_id}.duckdb"
        return DatabaseRef(db_id=db_id, path=str(database), dialect="duckdb")

    questions = (_question(record, path, i) for i, record in enumerate(records))
    return assemble(spec, questions, locate, questions_file=path, tables_file=None)


def _question(record: dict[str, Any], path: Path, index: int) -> Question:
    return Question(
        **question_fields(record, path, index, "SQL"),
        evidence=record.get("evidence") or "",
        difficulty=required(record, "difficulty", path, index),
        sds=required(record, "sds_total", path, index),
        floor_construct=required(record, "construct", path, index),
    )
