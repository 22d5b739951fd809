"""A strategy, and a repair, added by one file and one registry line each
(``tests/additions/``) answer end to end through ``ask``, ``eval``'s sweep worker, and a whole
``eval`` on Ray: the registries are the only places that name them."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import ray
from omegaconf import OmegaConf

import core.config
import models
from core.config import load_config, section
from eval.cli.run_cli import main as eval_main
from eval.sweep.services import ConfiguredPipeline
from pipelines.ask_cli import _answer
from pipelines.contracts import DatabaseRef, Prediction, Task
from pipelines.repair import registry as repairs
from pipelines.sandbox import Sandbox, SandboxSettings
from pipelines.strategies import registry as strategies
from tests.additions.in_workers import FIRST_SQL, TABLE_NAMES, OneReply
from tests.pipelines.conftest import sqlite_db

WRONG_TABLE = "SELECT count(*) FROM singers WHERE country = 'France'"


CONCERTS = """
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT);
INSERT INTO singer VALUES (1,'Joe','France'),(2,'Ann','France'),(3,'Li','China');
"""


@pytest.fixture
def database(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(tmp_path / "concerts.sqlite", CONCERTS)


@pytest.fixture
def first_sql_registered(monkeypatch):
    """The one registry line of the new strategy."""
    monkeypatch.setitem(strategies.STRATEGIES, "first_sql", FIRST_SQL)
    strategies._adapter.cache_clear()  # the settings union is built once per process
    yield
    strategies._adapter.cache_clear()


@pytest.fixture
def table_names_registered(monkeypatch):
    """The one registry line of the new repair."""
    monkeypatch.setitem(repairs.REPAIRS, "table_names", TABLE_NAMES)


def config(tmp_path: Path, *overrides: str):
    return load_config(
        [
            "model=replay",
            f"pipeline.index.root={tmp_path}/no-index",
            "pipeline.index.auto_build=false",
            "pipeline.trace.directory=null",
            *overrides,
        ]
    )


async def answers(cfg, task: Task, reply: str, monkeypatch) -> dict[str, Prediction]:
    """``task`` answered by ``ask`` and by the sweep's worker, each with its own client."""
    limits = section(cfg, "pipeline.sandbox", SandboxSettings).limits
    out = {}
    client = OneReply(reply)
    monkeypatch.setattr(models, "build_client", lambda cfg: client)
    out["ask"], _ = await _answer(cfg, task, limits)
    with Sandbox(limits=limits) as sandbox:
        worker = ConfiguredPipeline(OmegaConf.to_container(cfg, resolve=True), sandbox, None)()
        out["eval"] = await worker.answer(task)
        await worker.aclose()
    return out


async def test_a_strategy_added_by_one_file_and_one_line_answers_in_ask_and_eval(
    first_sql_registered, database, tmp_path, monkeypatch
):
    cfg = config(tmp_path)
    cfg.scaling = {"strategy": "first_sql", "max_tokens": 64}  # its YAML
    task = Task(task_id="q", question="How many singers are from France?", db=database)
    right = "SELECT count(*) FROM singer WHERE country = 'France'"

    for surface, prediction in (await answers(cfg, task, right, monkeypatch)).items():
        assert prediction.sql == right and prediction.exec_result.rows == ((2,),), surface
        assert prediction.producer == "first_sql", surface
        assert prediction.usage.calls == 1, surface


async def test_a_repair_added_by_one_file_and_one_line_runs_where_a_strategy_lists_it(
    table_names_registered, database, tmp_path, monkeypatch
):
    task = Task(task_id="q", question="How many singers are from France?", db=database)
    listed = config(tmp_path, "scaling=adaptive", "scaling.repairs=[columns,table_names]")

    for surface, prediction in (await answers(listed, task, WRONG_TABLE, monkeypatch)).items():
        assert prediction.exec_result.rows == ((2,),), surface
        assert "FROM singer WHERE" in prediction.sql, surface
        assert all("repair" in c.lineage for c in prediction.candidates if c.exec_result.ok)

    unlisted = config(tmp_path, "scaling=adaptive", "scaling.repairs=[columns]")
    for surface, prediction in (await answers(unlisted, task, WRONG_TABLE, monkeypatch)).items():
        assert not any(c.exec_result.ok for c in prediction.candidates), surface


@pytest.mark.ray
def test_the_added_strategy_and_repair_answer_through_a_whole_eval_on_ray(
    first_sql_registered, table_names_registered, tmp_path
):
    spider = tmp_path / "spider"
    (spider / "database" / "concerts").mkdir(parents=True)
    sqlite_db(spider / "database" / "concerts" / "concerts.sqlite", CONCERTS)
    gold = {
        "How many singers are from France?": "SELECT count(*) FROM singer WHERE country = 'France'",
        "How many singers are there?": "SELECT count(*) FROM singer",
    }
    (spider / "dev.json").write_text(
        json.dumps([{"db_id": "concerts", "question": q, "query": sql} for q, sql in gold.items()])
    )
    core.config._store_bases.cache_clear()  # `scaling=base_first_sql` is stored at a compose
    runs = tmp_path / "runs"

    def evaluate(name: str, *scaling: str) -> pl.DataFrame:
        overrides = [
            "benchmark=spider_dev",
            f"benchmark.data_dir={spider}",
            f"paths.runs={runs}",
            f"experiment.name={name}",
            "model=replay",
            f"pipeline.index.root={tmp_path / 'no-index'}",
            "pipeline.index.auto_build=false",
            "++sweep.progress=false",
            "++sweep.ves_iterations=1",
            *scaling,
        ]
        assert eval_main(overrides) == 0
        (predictions,) = (runs / name).glob("*/predictions.parquet")
        return pl.read_parquet(predictions).sort("task_id")

    # The workers import the registries afresh: Ray's setup hook gives them the two lines
    # (from the repository root, where the `tests` package is).
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        runtime_env={
            "worker_process_setup_hook": "tests.additions.in_workers.register",
            "env_vars": {"ADDITIONS_REPLY": WRONG_TABLE, "PYTHONPATH": str(core.config.REPO_ROOT)},
        },
    )
    try:
        first_sql = evaluate("first_sql", "scaling=base_first_sql")
        repaired = evaluate("repaired", "scaling=adaptive", "scaling.repairs=[columns,table_names]")
    finally:
        ray.shutdown()

    assert first_sql.get_column("producer").to_list() == ["first_sql"] * 2
    assert first_sql.get_column("calls").to_list() == [1, 1]
    assert all("no such table: singers" in e for e in first_sql.get_column("exec_error"))
    france = repaired.filter(pl.col("question") == "How many singers are from France?")
    assert france.get_column("ex_bird").to_list() == [True]
    assert "FROM singer WHERE" in france.get_column("sql").item()
    assert repaired.get_column("exec_error").is_null().all()
