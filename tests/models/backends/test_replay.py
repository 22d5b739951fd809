import json
from pathlib import Path

import pytest
import sqlglot

from core.types import Usage
from models.backends import replay as replay_module
from models.backends.replay import Cassette, ReplayBackend
from models.build import replay_client
from models.errors import CassetteMiss
from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatRequest, ChatResponse

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "models"


class CountingBackend:
    def __init__(self, model: str = "qwen2.5-coder-0.5b") -> None:
        self.calls = 0
        self._model = model

    @property
    def model(self) -> str:
        return self._model

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return ChatResponse(
            texts=(f"SELECT {self.calls}",) * request.n,
            usage=Usage(calls=1, prompt_tokens=9),
            latency_s=0.1,
            model=self._model,
            finish_reasons=("stop",) * request.n,
        )

    async def aclose(self) -> None:
        pass


def _req(content: str, **kw) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="user", content=content),), **kw)


@pytest.fixture(autouse=True)
def _fresh_recording_state(monkeypatch):
    monkeypatch.setattr(replay_module, "_started_this_process", set())


async def test_records_then_replays_without_the_model(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    inner = CountingBackend()
    recorder = ReplayBackend(Cassette(path), model=inner.model, inner=inner, record=True)
    first = await recorder.chat(_req("q1"))
    second = await recorder.chat(_req("q2", n=2))
    assert inner.calls == 2 and len(path.read_text().splitlines()) == 2

    player = ReplayBackend(Cassette(path), model="qwen2.5-coder-0.5b")
    assert await player.chat(_req("q2", n=2)) == second
    assert await player.chat(_req("q1")) == first
    entry = json.loads(path.read_text().splitlines()[0])
    assert (
        entry["request"]["messages"][0]["content"] == "q1"
        and entry["model"] == "qwen2.5-coder-0.5b"
    )


async def test_miss_names_the_request(tmp_path: Path) -> None:
    player = ReplayBackend(Cassette(tmp_path / "empty.jsonl"), model="qwen2.5-coder-0.5b")
    request = _req("How many heads of departments are older than 56?", temperature=0.8)
    with pytest.raises(CassetteMiss) as info:
        await player.chat(request)
    message = str(info.value)
    assert request.fingerprint("qwen2.5-coder-0.5b") in message
    assert "How many heads of departments" in message and "make cassettes" in message


async def test_cassette_is_keyed_by_model(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    await ReplayBackend(
        Cassette(path), model="qwen2.5-coder-0.5b", inner=CountingBackend(), record=True
    ).chat(_req("q"))
    with pytest.raises(CassetteMiss):
        await ReplayBackend(Cassette(path), model="qwen2.5-coder-1.5b").chat(_req("q"))


async def test_rerecording_starts_the_cassette_afresh(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "c.jsonl"
    await ReplayBackend(
        Cassette(path), model="qwen2.5-coder-0.5b", inner=CountingBackend(), record=True
    ).chat(_req("old"))
    monkeypatch.setattr(replay_module, "_started_this_process", set())  # a new `make cassettes` run
    rec = ReplayBackend(
        Cassette(path), model="qwen2.5-coder-0.5b", inner=CountingBackend(), record=True
    )
    await rec.chat(_req("new"))
    # a second backend on the same file in the same run appends instead of truncating
    await ReplayBackend(
        Cassette(path), model="qwen2.5-coder-0.5b", inner=CountingBackend(), record=True
    ).chat(_req("new2"))
    contents = [
        json.loads(line)["request"]["messages"][0]["content"]
        for line in path.read_text().splitlines()
    ]
    assert contents == ["new", "new2"]


async def test_filling_missing_entries_keeps_the_cassette_and_records_only_misses(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.jsonl"
    await ReplayBackend(
        Cassette(path), model="qwen2.5-coder-0.5b", inner=CountingBackend(), record=True
    ).chat(_req("old"))
    inner = CountingBackend()
    filler = ReplayBackend(
        Cassette(path), model="qwen2.5-coder-0.5b", inner=inner, fill_missing=True
    )
    assert (await filler.chat(_req("old"))).texts == ("SELECT 1",)  # replayed, not asked again
    await filler.chat(_req("added"))
    assert inner.calls == 1
    contents = [
        json.loads(line)["request"]["messages"][0]["content"]
        for line in path.read_text().splitlines()
    ]
    assert contents == ["old", "added"]


def test_missing_mode_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCALE_ANALYTICS_RECORD", "missing")
    assert replay_module.fill_missing_from_env() and not replay_module.record_mode_from_env()
    monkeypatch.setenv("SCALE_ANALYTICS_RECORD", "1")
    assert replay_module.record_mode_from_env() and not replay_module.fill_missing_from_env()


def test_bad_cassette_line_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"key": "k"}\n')
    with pytest.raises(ValueError, match="c.jsonl:1 is not a cassette entry"):
        Cassette(path)


def test_recording_needs_a_matching_real_backend(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a real backend"):
        ReplayBackend(Cassette(tmp_path / "c.jsonl"), model="m", record=True)
    with pytest.raises(ValueError, match="serves 'other'"):
        ReplayBackend(Cassette(tmp_path / "c.jsonl"), model="m", inner=CountingBackend("other"))


SPIDER_STYLE_PROMPT = """CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year INTEGER);

Question: How many singers are from France and older than 30?
Answer with one SQLite query in a ```sql block."""


async def test_recorded_model_answer_replays_as_sql() -> None:
    """Replays (or, under `make cassettes`, records) the real 0.5B model answering a question."""
    client = replay_client(CASSETTES / "replay_smoke.jsonl")
    try:
        resp = await client.chat(
            ChatRequest(
                messages=(ChatMessage(role="user", content=SPIDER_STYLE_PROMPT),), max_tokens=128
            ),
            role="generator",
        )
    finally:
        await client.aclose()
    sql = extract_sql(resp.texts[0])
    tree = sqlglot.parse_one(sql, read="sqlite")
    assert "singer" in {t.name.lower() for t in tree.find_all(sqlglot.exp.Table)}
    assert resp.model == "qwen2.5-coder-0.5b" and resp.usage.completion_tokens > 0
