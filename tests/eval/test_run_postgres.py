"""``eval`` answering the claims benchmark from its PostgreSQL copy (a real server,
``tests/conftest.py``) with a scripted pipeline: the server stopped for a whole run gives every
question a typed error and the run completes; a rerun with ``sweep.retry=errors`` once the
server is back answers exactly those questions again, graded against the benchmark's file."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import pytest
import ray.cloudpickle
import sqlglot

from core.config import load_config
from eval.experiments import Configuration
from eval.loaders import load_benchmark
from eval.run import run_configuration
from eval.sweep.config import RayInitSettings
from eval.sweep.session import ray_session
from pipelines.contracts import CandidateSQL, Prediction, Task
from pipelines.sandbox import Sandbox

pytestmark = pytest.mark.ray
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class LazySandbox:
    """The real sandbox, created in whichever process first uses it."""

    def __init__(self):
        self._sandbox = None

    async def execute(self, sql, db, **kwargs):
        self._sandbox = self._sandbox or Sandbox(timeout_s=2)
        return await self._sandbox.aexecute(sql, db)


class TranspiledGold:
    """Answers each question with its gold SQL in PostgreSQL's dialect, run on ``task.db``."""

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def __call__(self):
        return self

    async def answer(self, task: Task) -> Prediction:
        sql = sqlglot.transpile(task.gold_sql, read="sqlite", write="postgres")[0]
        result = await self.sandbox.execute(sql, task.db)
        return Prediction(
            task_id=task.task_id,
            sql=sql,
            exec_result=result,
            candidates=(CandidateSQL(sql=sql, producer="gold", exec_result=result),),
        )

    async def aclose(self):
        pass


@contextmanager
def services(cfg, sweep, storage):
    sandbox = LazySandbox()
    yield TranspiledGold(sandbox), sandbox


def test_a_run_with_the_server_down_completes_and_a_rerun_answers_again(
    claims_pg, demo, postgres, tmp_path
):
    _, server_db = claims_pg
    overrides = [
        "benchmark=demo",
        f"benchmark.data_dir={demo.data_dir}",
        "benchmark.limit=4",
        f"+benchmark.servers.claims={server_db.path}",
        f"paths.runs={tmp_path / 'runs'}",
        "experiment.name=unit",
        "++sweep.progress=false",
        f"pipeline.index.root={tmp_path / 'indexes'}",
        "pipeline.index.auto_build=false",
    ]
    cfg = Configuration.of("pg", overrides, load_config(overrides))
    benchmark = load_benchmark(cfg.benchmark)
    with ray_session(RayInitSettings()):
        postgres.stop()
        try:
            down = run_configuration(cfg, benchmark, services=services)
        finally:
            postgres.start()
        assert (down.sweep.total, down.sweep.answered) == (4, 4)
        assert down.result.metrics()["ex_bird"] == 0.0
        retry = ["++sweep.retry=errors", *overrides]
        again = Configuration.of("pg", retry, load_config(retry))
        back = run_configuration(again, benchmark, services=services)
    assert back.run_dir == down.run_dir  # the same run, resumed
    assert back.sweep.retried == 4
    assert back.result.metrics()["ex_bird"] == 1.0
