"""One question on one database gets the same pipeline on every surface: ``ask``, the endpoint's
default profile and ``eval``'s sweep workers build it with ``pipelines.factory.build_pipeline``,
which chooses the database's settings (``pipelines/database_rules.py``) — so every model request,
and the SQL, is the same."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import models
from core.config import load_config, section
from core.types import Usage
from eval.sweep.services import ConfiguredPipeline
from models.types import ChatResponse
from pipelines.ask_cli import _answer
from pipelines.contracts import DatabaseRef, Task
from pipelines.sandbox import Sandbox, SandboxSettings
from serve.cli import profile_configs
from serve.engine import QueryEngine
from serve.settings import ServeSettings

SQL = "SELECT COUNT(*) FROM region_0"


class RecordingClient:
    """Answers every request with ``SQL`` and keeps each request's messages."""

    def __init__(self) -> None:
        self.prompts: list[tuple[str, ...]] = []

    async def chat(self, request, *, role: str = "generator", budget=None) -> ChatResponse:
        self.prompts.append(tuple(m.content for m in request.messages))
        texts = (f"```sql\n{SQL}\n```",) * request.n
        return ChatResponse(
            texts=texts,
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=10),
            latency_s=0.0,
            model="recording",
            finish_reasons=("stop",) * request.n,
        )

    def close(self) -> None:
        pass


def _warehouse(folder: Path) -> DatabaseRef:
    """A SQLite file large enough to be a large schema, with solved examples of its own."""
    path = folder / "warehouse.sqlite"
    with sqlite3.connect(path) as conn:
        for t in range(40):
            columns = ", ".join(f"measure_{c} INTEGER" for c in range(14))
            conn.execute(f"CREATE TABLE region_{t} (region_id INTEGER PRIMARY KEY, {columns})")
            conn.execute(f"INSERT INTO region_{t} VALUES ({', '.join(['1'] * 15)})")
    conn.close()
    (folder / "warehouse.examples.yml").write_text(
        "- question: How many regions are there?\n  sql: SELECT COUNT(*) FROM region_1\n"
    )
    return DatabaseRef(db_id="warehouse", path=str(path))


async def test_ask_the_endpoint_and_eval_send_the_same_requests(tmp_path, monkeypatch):
    db = _warehouse(tmp_path)
    task = Task(task_id="q", question="How many rows does region 0 hold?", db=db)
    overrides = [
        "model=replay",
        f"pipeline.index.root={tmp_path}/no-index",
        "pipeline.index.auto_build=false",
        "pipeline.trace.directory=null",
    ]
    cfg = load_config(overrides)
    answers = {}

    client = RecordingClient()
    monkeypatch.setattr(models, "build_client", lambda cfg: client)
    limits = section(cfg, "pipeline.sandbox", SandboxSettings).limits
    prediction, _ = await _answer(cfg, task, limits)
    answers["ask"] = (prediction, client.prompts)

    client = RecordingClient()
    monkeypatch.setattr(models, "build_client", lambda cfg: client)
    with Sandbox(limits=limits) as sandbox:
        from omegaconf import OmegaConf

        worker = ConfiguredPipeline(OmegaConf.to_container(cfg, resolve=True), sandbox, None)()
        prediction, _ = await worker.answer_with_trace(task)
        await worker.aclose()
    answers["eval"] = (prediction, client.prompts)

    client = RecordingClient()
    settings = ServeSettings(state_dir=str(tmp_path / "state"))
    with Sandbox(limits=limits) as sandbox:
        engine = QueryEngine(
            profile_configs(overrides, settings.profiles), settings, sandbox, client=client
        )
        endpoint = engine._pipeline(settings.default_profile)
        prediction, _ = await endpoint.answer_with_trace(task)
        await endpoint.aclose()
    answers["endpoint"] = (prediction, client.prompts)

    asked, prompts = answers["ask"]
    assert asked.sql == SQL and asked.error is None
    assert {"sample_rows=1", "example_threshold=0.1", "select=vote"} <= set(map(str, asked.chosen))
    assert "1 example rows" in prompts[0][0]  # one row per table: the large-schema choice
    for surface in ("eval", "endpoint"):
        prediction, sent = answers[surface]
        assert prediction.sql == asked.sql and prediction.chosen == asked.chosen, surface
        assert sent == prompts, surface
