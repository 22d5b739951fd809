"""Fakes for sweep tests: a tiny SQLite database, a sandbox over it, and a scripted pipeline.

The fakes are pickled by value so Ray worker processes can use them without importing tests.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest
import ray.cloudpickle

from core.types import Usage
from pipelines.contracts import CandidateSQL, DatabaseRef, ExecutionResult, Prediction, Task

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def make_db(path: Path) -> DatabaseRef:
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE member (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, plan TEXT);
        INSERT INTO member VALUES (1,'Ann',34,'gold'),(2,'Bob',51,'silver'),(3,'Cy',28,'gold'),
                                  (4,'Di',67,'bronze'),(5,'Ed',45,'silver');
        """
    )
    con.commit()
    con.close()
    return DatabaseRef(db_id="clinic", path=str(path))


GOLD = [
    "SELECT name FROM member WHERE plan = 'gold'",
    "SELECT count(*) FROM member",
    "SELECT name FROM member ORDER BY age DESC",
    "SELECT plan, count(*) FROM member GROUP BY plan",
    "SELECT max(age) FROM member",
    "SELECT name FROM member WHERE age > 40",
]
WRONG = "SELECT name FROM member WHERE plan = 'silver'"


def make_tasks(db: DatabaseRef, n: int) -> list[Task]:
    return [
        Task(
            task_id=f"fake:{i}",
            question=f"question {i}",
            db=db,
            gold_sql=GOLD[i % len(GOLD)],
            difficulty=("simple", "moderate", "challenging")[i % 3],
            benchmark="fake",
        )
        for i in range(n)
    ]


class SQLiteExecutor:
    """The sandbox's ``execute`` over a real SQLite file (read-only), with an order-free hash."""

    async def execute(self, sql: str, db: DatabaseRef) -> ExecutionResult:
        try:
            con = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)
            cursor = con.execute(sql)
            rows = tuple(tuple(r) for r in cursor.fetchall())
            columns = tuple(d[0] for d in cursor.description or ())
            con.close()
        except sqlite3.Error as exc:
            return ExecutionResult(
                error=str(exc), error_kind="sql_error", hash="ERR:" + _digest(str(exc))
            )
        canonical = json.dumps(sorted(rows, key=repr), default=str)
        return ExecutionResult(
            rows=rows, columns=columns, row_count=len(rows), hash=_digest(canonical), elapsed_ms=0.1
        )


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


class ScriptedPipeline:
    """Answers even-numbered questions with the gold SQL, odd ones with a wrong one.

    Faults by task id: ``crash`` kills the worker process once (a marker file in ``marker_dir``
    remembers) or every time (no ``marker_dir``), ``hang`` never answers, ``fail`` raises.
    """

    def __init__(
        self,
        delay_s: float = 0.02,
        crash: str = "",
        hang: str = "",
        fail: str = "",
        marker_dir: str = "",
    ):
        self.delay_s, self.crash, self.hang, self.fail, self.marker_dir = (
            delay_s,
            crash,
            hang,
            fail,
            marker_dir,
        )
        self.sandbox = SQLiteExecutor()

    def __call__(self) -> ScriptedPipeline:  # the factory the worker calls
        return self

    async def answer(self, task: Task) -> Prediction:
        await asyncio.sleep(self.delay_s)
        if task.task_id == self.crash:
            if not self.marker_dir:
                os._exit(1)
            marker = Path(self.marker_dir) / "crashed"
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                os._exit(1)
        if task.task_id == self.hang:
            await asyncio.sleep(3600)
        if task.task_id == self.fail:
            raise RuntimeError("model actor died")
        index = int(task.task_id.split(":")[1])
        chosen = task.gold_sql if index % 2 == 0 else WRONG
        pool = [chosen, WRONG, task.gold_sql, "SELECT nope FROM member"]
        candidates = []
        for k, sql in enumerate(pool):
            result = await self.sandbox.execute(sql, task.db)
            candidates.append(CandidateSQL(sql=sql, producer=f"fake/{k}", exec_result=result))
        return Prediction(
            task_id=task.task_id,
            sql=chosen,
            producer="fake/0",
            candidates=tuple(candidates),
            usage=Usage(calls=4, prompt_tokens=100 + index, completion_tokens=20, cost_usd=0.001),
            latency_s=self.delay_s,
        )

    async def aclose(self) -> None:
        return None


@pytest.fixture
def clinic_db(tmp_path: Path) -> DatabaseRef:
    return make_db(tmp_path / "clinic.sqlite")


@pytest.fixture
def fakes():
    """This module, for tests (conftest modules cannot be imported under importlib mode)."""
    return sys.modules[__name__]
