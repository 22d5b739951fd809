"""What every loader shares: the benchmark spec (the ``conf/benchmark`` group), the loaded result,
subsetting, and the split of questions into runnable tasks and skipped ones.

    conf/benchmark/*.yaml ──► BenchmarkSpec ──► loader ──► [Question] ──► LoadedBenchmark
                                                                          (tasks, skipped)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from core.types import Frozen
from eval.errors import BenchmarkDataError
from pipelines.contracts import DatabaseRef, Difficulty, SkippedTask, Task

BenchmarkKind = Literal["spider", "bird", "demo", "enterprise"]


# The fields of BenchmarkSpec that pick which questions run, not how each is answered: a run
# is identified without them, so it grows across invocations (eval/run.py, eval/experiments.py).
SUBSET_FIELDS = ("limit", "stride", "offset", "order")

# given: the file's order. mixed: the difficulties interleaved so that every prefix of the subset
# keeps its mix (a file sorted by difficulty otherwise puts every hard question last).
Order = Literal["given", "mixed"]


class BenchmarkSpec(Frozen):
    """One benchmark as configured (``conf/benchmark/<name>.yaml``).

    ``file`` overrides the split's default question file; ``id_prefix`` (default ``name``)
    starts every task id, so subsets of one file share ids (``spider_dev:42``).
    Subsetting keeps ``existing[offset::stride][:limit]`` of the questions whose database exists,
    ``order=mixed`` reordering ``existing[offset::stride]`` before the limit (:func:`mixed`).
    """

    name: str
    kind: BenchmarkKind
    data_dir: str
    split: str = "dev"
    file: str | None = None
    id_prefix: str | None = None
    limit: int | None = Field(default=None, ge=0)
    stride: int = Field(default=1, ge=1)
    offset: int = Field(default=0, ge=0)
    order: Order = "given"
    # Databases answered from a server copy (``scale-analytics db load``): db_id ->
    # ``postgresql://`` URI. Their questions go to the server; gold SQL runs on the file.
    servers: dict[str, str] = {}

    @property
    def prefix(self) -> str:
        return self.id_prefix or self.name

    def task_id(self, index: int) -> str:
        return f"{self.prefix}:{index}"


class Question(Frozen):
    """One question as read from a benchmark file, before its database is checked."""

    index: int  # position in the original file
    db_id: str
    question: str
    gold_sql: str
    evidence: str = ""
    difficulty: Difficulty | None = None
    sds: int | None = None  # SDS total, where the benchmark rates its questions (eval/sds.py)
    # The one construct the question exercises, where the benchmark names one (a floor question).
    floor_construct: str | None = None


class LoadedBenchmark(Frozen):
    """A benchmark ready to run: its tasks (database present) and what was skipped and why."""

    name: str
    kind: BenchmarkKind
    id_prefix: str  # task ids are f"{id_prefix}:{index in the question file}"
    split: str
    data_dir: str
    questions_file: str
    tables_file: str | None  # schema JSON (Spider tables.json / BIRD dev_tables.json) if present
    total_questions: int  # questions in the file, before skipping and subsetting
    tasks: tuple[Task, ...]
    skipped: tuple[SkippedTask, ...]


def task_index(task_id: str) -> int:
    """The question's position in its file, from a task id ``<prefix>:<index>``."""
    try:
        return int(task_id.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        raise ValueError(
            f"not a benchmark task id (want '<prefix>:<index>'): {task_id!r}"
        ) from None


def read_json_list(path: Path) -> list[dict[str, Any]]:
    """A benchmark question file: a JSON list of objects."""
    if not path.is_file():
        raise BenchmarkDataError(f"benchmark question file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BenchmarkDataError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise BenchmarkDataError(f"{path} must hold a JSON list of question objects")
    return data


def required(record: dict[str, Any], key: str, path: Path, index: int) -> Any:
    if key not in record:
        raise BenchmarkDataError(f"{path}: question {index} has no {key!r} field")
    return record[key]


def split_files(
    spec: BenchmarkSpec, splits: Mapping[str, tuple[str, str, str]], benchmark: str
) -> tuple[Path, Path, Path]:
    """The question file, databases folder and tables file of ``spec``'s split, where ``splits``
    maps a split to those three names under ``data_dir`` (``spec.file`` names another question
    file).

    >>> splits = {"dev": ("dev.json", "database", "tables.json")}
    >>> spec = BenchmarkSpec(name="x", kind="spider", data_dir="/d")
    >>> [str(p) for p in split_files(spec, splits, "Spider")]
    ['/d/dev.json', '/d/database', '/d/tables.json']
    """
    if spec.split not in splits:
        raise BenchmarkDataError(
            f"unknown {benchmark} split {spec.split!r}; expected one of {sorted(splits)}"
        )
    default_file, database_dir, tables_name = splits[spec.split]
    root = Path(spec.data_dir).resolve()
    return root / (spec.file or default_file), root / database_dir, root / tables_name


def question_fields(record: dict[str, Any], path: Path, index: int, sql_key: str) -> dict[str, Any]:
    """The fields of a :class:`Question` every benchmark file has, its gold SQL under ``sql_key``."""
    return {
        "index": index,
        "db_id": required(record, "db_id", path, index),
        "question": required(record, "question", path, index),
        "gold_sql": required(record, sql_key, path, index),
    }


def assemble(
    spec: BenchmarkSpec,
    questions: Iterable[Question],
    locate: Callable[[str], DatabaseRef],
    *,
    questions_file: Path,
    tables_file: Path | None,
) -> LoadedBenchmark:
    """Split questions into tasks and skips (missing database), then subset the tasks."""
    tasks: list[Task] = []
    skipped: list[SkippedTask] = []
    total = 0
    refs: dict[str, DatabaseRef] = {}
    for q in questions:
        total += 1
        ref = refs.get(q.db_id) or refs.setdefault(q.db_id, locate(q.db_id))
        task_id = spec.task_id(q.index)
        if not Path(ref.path).is_file():
            reason = f"database not found: {ref.path}"
            skipped.append(SkippedTask(task_id=task_id, db_id=q.db_id, reason=reason))
            continue
        tasks.append(
            Task(
                task_id=task_id,
                question=q.question,
                db=ref,
                evidence=q.evidence,
                gold_sql=q.gold_sql,
                difficulty=q.difficulty,
                sds=q.sds,
                floor_construct=q.floor_construct,
                benchmark=spec.prefix,
            )
        )
    subset = tasks[spec.offset :: spec.stride]
    if spec.order == "mixed":
        subset = mixed(subset)
    if spec.limit is not None:
        subset = subset[: spec.limit]
    return LoadedBenchmark(
        name=spec.name,
        kind=spec.kind,
        id_prefix=spec.prefix,
        split=spec.split,
        data_dir=spec.data_dir,
        questions_file=str(questions_file),
        tables_file=str(tables_file) if tables_file is not None and tables_file.is_file() else None,
        total_questions=total,
        tasks=tuple(subset),
        skipped=tuple(skipped),
    )


def mixed(tasks: Sequence[Task]) -> list[Task]:
    """``tasks`` with their difficulties interleaved: each next task is of the difficulty furthest
    below its share of ``tasks`` so far, the first-listed on a tie; within a difficulty the order
    is kept. Every prefix then holds each difficulty in about its share.

    >>> from pipelines.contracts import DatabaseRef
    >>> db = DatabaseRef(db_id="d", path="d.sqlite")
    >>> level = {"s": "simple", "m": "moderate", "c": "challenging"}
    >>> tasks = [Task(task_id=str(i), question="q", db=db, difficulty=level[d])
    ...          for i, d in enumerate("sssssmmmmmcc")]
    >>> "".join(t.difficulty[0] for t in mixed(tasks))
    'smcsmsmsmcsm'
    """
    groups: dict[str | None, list[Task]] = {}
    for task in tasks:
        groups.setdefault(task.difficulty, []).append(task)
    taken = dict.fromkeys(groups, 0)
    out: list[Task] = []
    for k in range(1, len(tasks) + 1):
        level = max(
            (g for g in groups if taken[g] < len(groups[g])),
            key=lambda g: len(groups[g]) * k / len(tasks) - taken[g],
        )
        out.append(groups[level][taken[level]])
        taken[level] += 1
    return out
