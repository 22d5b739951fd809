"""A strategy, and a repair, added by one file and one registry line each
(``tests/additions/``) answer end to end through ``ask`` and ``eval``'s sweep worker: the
registries are the only places that name them."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

import models
from core.config import load_config, section
from core.types import Usage
from eval.sweep.services import ConfiguredPipeline
from models.types import ChatResponse
from pipelines.ask_cli import _answer
from pipelines.contracts import DatabaseRef, Prediction, Task
from pipelines.repair import registry as repairs
from pipelines.sandbox import Sandbox, SandboxSettings
from pipelines.strategies import registry as strategies
from tests.pipelines.conftest import sqlite_db

WRONG_TABLE = "SELECT count(*) FROM singers WHERE country = 'France'"


class OneReply:
    """Answers every request with ``sql`` (each of its ``n``), and counts the requests."""

    def __init__(self, sql: str) -> None:
        self.sql, self.requests = sql, 0

    async def chat(self, request, *, role: str = "generator", budget=None) -> ChatResponse:
        self.requests += 1
        texts = (f"```sql\n{self.sql}\n```",) * request.n
        return ChatResponse(
            texts=texts,
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=10),
            latency_s=0.0,
            model="one-reply",
            finish_reasons=("stop",) * request.n,
        )

    def close(self) -> None:
        pass


@pytest.fixture
def database(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(
        tmp_path / "concerts.sqlite",
        """
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT);
        INSERT INTO singer VALUES (1,'Joe','France'),(2,'Ann','France'),(3,'Li','China');
        """,
    )


@pytest.fixture
def first_sql_registered(monkeypatch):
    """The one registry line of the new strategy."""
    monkeypatch.setitem(strategies.STRATEGIES, "first_sql", "tests.additions.first_sql:FirstSQL")
    strategies._adapter.cache_clear()  # the settings union is built once per process
    yield
    strategies._adapter.cache_clear()


@pytest.fixture
def table_names_registered(monkeypatch):
    """The one registry line of the new repair."""
    monkeypatch.setitem(repairs.REPAIRS, "table_names", "tests.additions.table_names:TableNames")


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
