"""Small on-disk benchmarks for the scoring and CLI tests (built in tmp_path, never shared data)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

SINGERS = [
    (1, "Ann", "France", 30),
    (2, "Bob", "France", 41),
    (3, "Cid", "Spain", 25),
    (4, "Dee", "Chile", 41),
]

# (question, gold SQL); Spider hardness comes from the loader.
QUESTIONS = [
    ("How many singers?", "SELECT count(*) FROM singer"),
    ("Names by age, oldest first.", "SELECT name FROM singer ORDER BY age DESC, name"),
    ("Countries of singers.", "SELECT country FROM singer"),
    ("Name and age of singers over 26.", "SELECT name, age FROM singer WHERE age > 26"),
    ("Average age.", "SELECT avg(age) FROM singer"),
    ("Broken gold.", "SELECT no_such_column FROM singer"),
]


def _database(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER)"
        )
        conn.executemany("INSERT INTO singer VALUES (?, ?, ?, ?)", SINGERS)
    conn.close()


@pytest.fixture
def tiny_spider(tmp_path: Path) -> Path:
    """Spider layout: dev.json with QUESTIONS on db ``music`` plus one on a missing db."""
    root = tmp_path / "spider"
    records = [{"db_id": "music", "question": q, "query": sql} for q, sql in QUESTIONS]
    records.append({"db_id": "absent_db", "question": "Lost?", "query": "SELECT 1"})
    root.mkdir()
    (root / "dev.json").write_text(json.dumps(records))
    _database(root / "database" / "music" / "music.sqlite")
    return root


@pytest.fixture
def tiny_bird(tmp_path: Path) -> Path:
    """BIRD mini-dev layout with the same questions, evidence and BIRD difficulties."""
    root = tmp_path / "bird"
    levels = ["simple", "moderate", "challenging"]
    records = [
        {
            "question_id": 100 + i,
            "db_id": "music",
            "question": q,
            "evidence": "",
            "SQL": sql,
            "difficulty": levels[i % 3],
        }
        for i, (q, sql) in enumerate(QUESTIONS)
    ]
    root.mkdir()
    (root / "mini_dev_sqlite.json").write_text(json.dumps(records))
    _database(root / "dev_databases" / "music" / "music.sqlite")
    return root


class ScriptedJudgeModel:
    """A fake chat backend for the Answer Correctness judge: ``reply(prompt)`` gives the text."""

    model = "fake-judge"

    def __init__(self, reply) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    async def chat(self, request):
        from core.types import Usage
        from models.types import ChatResponse

        prompt = "\n".join(m.content for m in request.messages)
        self.prompts.append(prompt)
        return ChatResponse(
            texts=(self.reply(prompt),),
            usage=Usage(calls=1, prompt_tokens=1000, completion_tokens=50),
            latency_s=2.0,
            model=self.model,
        )

    async def aclose(self) -> None:
        pass


@pytest.fixture
def judge_client():
    """``judge_client(reply, price)`` -> (ModelClient with a ``judge`` role, its fake backend)."""
    from models.budget import Price
    from models.client import ModelClient, RetryPolicy, Slot

    def make(reply, price=None):
        backend = ScriptedJudgeModel(reply)
        client = ModelClient(
            {"default": Slot("default", backend, price=price or Price())},
            {"judge": "default"},
            RetryPolicy(max_attempts=1, backoff_s=0, max_backoff_s=0),
        )
        return client, backend

    return make
