import sqlite3
from pathlib import Path

import pytest

from core.config import load_config
from models.backends.openai_compat import OpenAICompatBackend
from models.backends.replay import ReplayBackend
from models.build import build_client, replay_client
from models.client import ROLES
from models.errors import ModelUnavailable
from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatRequest


def test_every_role_has_a_slot_in_every_config() -> None:
    for name in [
        "qwen2.5-coder-1.5b",
        "qwen2.5-coder-0.5b",
        "mixed-cpu",
        "replay",
        "qwen2.5-coder-32b",
        "omnisql-32b",
    ]:
        roles = load_config([f"model={name}"]).model.roles
        assert set(roles) == set(ROLES), name


def test_replay_config_builds_without_a_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SCALE_ANALYTICS_RECORD", raising=False)
    client = replay_client(tmp_path / "c.jsonl")
    backend = client.slot_for("selector").backend
    assert isinstance(backend, ReplayBackend) and not backend.record
    assert client.slot_for("generator").backend.model == "qwen2.5-coder-0.5b"


def test_gpu_configs_reach_the_serve_ingress_through_openai_compat() -> None:
    client = build_client(load_config(["model=omnisql-32b"]).model)
    generator, selector = client.slot_for("generator").backend, client.slot_for("critic").backend
    assert isinstance(generator, OpenAICompatBackend) and generator.config.flavor == "vllm"
    assert generator.model == "omnisql-32b" and selector.model == "qwen2.5-coder-32b"
    assert generator.config.base_url == "http://127.0.0.1:8000/v1"


def test_local_config_without_the_model_says_how_to_pull(tmp_path: Path) -> None:
    cfg = load_config(["model=qwen2.5-coder-1.5b", f"paths.models={tmp_path}"]).model
    with pytest.raises(ModelUnavailable, match="models pull qwen2.5-coder-1.5b"):
        build_client(cfg)


def test_recording_without_a_real_backend_is_refused(tmp_path: Path) -> None:
    cfg = load_config(
        [
            "model=replay",
            "model.slots.default.record=true",
            "~model.slots.default.record_with",
            f"model.slots.default.cassette={tmp_path / 'c.jsonl'}",
        ]
    ).model
    with pytest.raises(ValueError, match="no record_with backend"):
        build_client(cfg)


@pytest.mark.real_model
async def test_real_model_end_to_end_answers_a_spider_question(model_05b_path: Path) -> None:
    """Config → local server → chat → extract_sql → the SQL runs on the real database."""
    cfg = load_config(
        [
            "model=qwen2.5-coder-0.5b",
            "model.slots.default.n_parallel=1",
            "model.slots.default.ctx_per_slot=4096",
            "model.slots.default.placement=process",
        ]
    )
    db = (
        Path(cfg.paths.benchmarks)
        / "spider"
        / "database"
        / "concert_singer"
        / "concert_singer.sqlite"
    )
    if not db.exists():
        pytest.skip(f"Spider database not found at {db}")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    schema = "\n".join(
        row[0] for row in con.execute("SELECT sql FROM sqlite_master WHERE type='table'")
    )
    client = build_client(cfg.model)
    backend = client.slot_for("generator").backend
    try:
        resp = await client.chat(
            ChatRequest(
                messages=(
                    ChatMessage(
                        role="system", content="Answer with one SQLite query in a ```sql block."
                    ),
                    ChatMessage(
                        role="user", content=f"{schema}\n\nQuestion: How many singers do we have?"
                    ),
                ),
                max_tokens=96,
            ),
            role="generator",
        )
    finally:
        await client.aclose()
    rows = con.execute(extract_sql(resp.texts[0])).fetchall()
    gold = con.execute("SELECT count(*) FROM singer").fetchall()  # Spider's gold query
    con.close()
    assert rows == gold
    assert resp.model == "qwen2.5-coder-0.5b" and resp.usage.prompt_tokens > 100
    with pytest.raises(ModelUnavailable):  # closing the client stopped its server
        await backend.chat(
            ChatRequest(messages=(ChatMessage(role="user", content="x"),), max_tokens=1)
        )
