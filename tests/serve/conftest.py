"""Fixtures of the endpoint tests: the concerts database, a scripted model, an in-process app.

``concerts`` is byte for byte the database of ``tests/pipelines`` (``tiny_db``), so the replay
cassette recorded there for "How many singers are from France?" (single pass) answers here too.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from core.types import Usage
from models.types import ChatRequest, ChatResponse
from pipelines.sandbox import Sandbox
from serve.api import LocalBackend, build_api
from serve.cli import profile_configs
from serve.databases import register
from serve.engine import QueryEngine
from serve.keys import ApiKey, KeyRing, hash_key
from serve.settings import ServeSettings
from serve.store import StateStore
from serve.types import RegisterRequest

CONCERTS_SQL = """
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
        CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, singer_id INTEGER
                              REFERENCES singer(singer_id), year INTEGER);
        INSERT INTO singer VALUES (1,'Joe','France',52),(2,'Ann','France',29),(3,'Li','China',41),
                                  (4,'Bo','USA',33),(5,'Eve','USA',25);
        INSERT INTO concert VALUES (1,1,2014),(2,1,2015),(3,3,2015),(4,4,2014);
        """
REPO = Path(__file__).resolve().parents[2]
CASSETTE = REPO / "tests" / "cassettes" / "pipelines" / "test_single_pass_replayed.jsonl"
QUESTION = "How many singers are from France?"  # the question the cassette holds

ADMIN_KEY, ANALYST_KEY, OTHER_KEY = "admin-secret-1", "analyst-secret-2", "other-secret-3"


def make_concerts(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(CONCERTS_SQL)
    conn.commit()
    conn.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def concerts(tmp_path: Path) -> Path:
    return make_concerts(tmp_path / "concerts.sqlite")


class FakeModel:
    """Answers the single-pass prompt with ``sql`` and the response agent with ``explanation``
    (a JSON text, or an exception to raise); counts calls per kind."""

    def __init__(self, sql: str, explanation: object) -> None:
        self.sql, self.explanation = sql, explanation
        self.calls: list[str] = []

    async def chat(self, request: ChatRequest, *, role: str, budget=None) -> ChatResponse:
        text = request.messages[-1].content
        if text.startswith("-- Using valid"):
            kind, reply = "sql", f"```sql\n{self.sql}\n```"
        elif "explain the result" in request.messages[0].content:
            kind, reply = "explain", self.explanation
        else:
            raise AssertionError(f"unexpected prompt {text[:60]!r}")
        self.calls.append(kind)
        if isinstance(reply, Exception):
            raise reply
        usage = Usage(calls=1, prompt_tokens=100, completion_tokens=10)
        if budget is not None:
            budget.charge(usage)
        return ChatResponse(
            texts=(str(reply),) * request.n,
            usage=usage,
            latency_s=0.0,
            model="fake",
            finish_reasons=("stop",) * request.n,
        )

    async def aclose(self) -> None:
        pass

    def close(self) -> None:
        pass


def keys_ring() -> KeyRing:
    return KeyRing(
        keys={
            hash_key(ADMIN_KEY): ApiKey(id="ops", sha256=hash_key(ADMIN_KEY), admin=True),
            hash_key(ANALYST_KEY): ApiKey(
                id="analyst", sha256=hash_key(ANALYST_KEY), databases=("concerts",)
            ),
            hash_key(OTHER_KEY): ApiKey(
                id="other", sha256=hash_key(OTHER_KEY), databases=("sales",), rate_per_minute=2
            ),
        }
    )


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def make_app(tmp_path: Path, concerts: Path) -> Callable:
    """``make_app(model, ring=..., **settings)`` -> (TestClient, engine, settings)."""
    from fastapi.testclient import TestClient

    made = []

    def make(model: FakeModel, ring: KeyRing | None = None, **overrides):
        settings = ServeSettings(
            state_dir=str(tmp_path / "state"), default_profile="fast", **overrides
        )
        cfgs = profile_configs(
            [
                "model=replay",
                f"pipeline.index.root={tmp_path}/no-index",
                "pipeline.index.auto_build=false",
            ],
            settings.profiles,
        )
        sandbox = Sandbox(timeout_s=10, row_cap=1000, isolation="inline")
        engine = QueryEngine(cfgs, settings, sandbox, client=model)
        register(
            StateStore(settings.state_dir),
            RegisterRequest(name="concerts", path=str(concerts)),
            "config",
        )
        client = TestClient(build_api(LocalBackend(engine), settings, ring or KeyRing()))
        made.append(sandbox)
        return client, engine, settings

    yield make
    for sandbox in made:
        sandbox.close()


def explanation_json(text: str, assumptions: list[str] | None = None) -> str:
    return json.dumps({"explanation": text, "assumptions": assumptions or []})
