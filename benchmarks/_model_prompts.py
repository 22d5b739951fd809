"""The prompts of the model runtime benchmark (``bench_models.py``): a Spider database's CREATE
TABLE statements with 3 example rows per table, plus the question, under one system message.

from _model_prompts import load_prompts, request   # scripts run as python benchmarks/<name>.py

prompts = load_prompts(spider_dir, 16)   # the 16 smallest dev databases' prompts
req = request(prompts.one_db[0], max_tokens=48, temperature=0.0)
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from models import ChatMessage, ChatRequest

SYSTEM = "You are a SQLite expert. Answer with one SQL query in a ```sql block."


def schema_prompt(db_file: Path) -> str:
    """CREATE TABLE statements plus 3 example rows per table (the baseline's prompt shape)."""
    con = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    try:
        parts = []
        for name, ddl in con.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL"
        ):
            rows = con.execute(f'SELECT * FROM "{name}" LIMIT 3').fetchall()
            parts.append(ddl + "\n/* 3 example rows:\n" + "\n".join(map(str, rows)) + "\n*/")
        return "\n\n".join(parts)
    finally:
        con.close()


@dataclass(frozen=True)
class Prompts:
    one_db: list[str]  # questions on one database (shared schema prefix)
    many_dbs: list[str]  # one question per database
    many_dbs_other: list[str]  # another question on the same databases as many_dbs


def load_prompts(spider: Path, count: int) -> Prompts:
    dev = json.loads((spider / "dev.json").read_text())
    db_file = {q["db_id"]: spider / "database" / q["db_id"] / f"{q['db_id']}.sqlite" for q in dev}
    by_db: dict[str, list[dict]] = {}
    for q in dev:
        if db_file[q["db_id"]].exists():
            by_db.setdefault(q["db_id"], []).append(q)
    schemas = {db: schema_prompt(db_file[db]) for db in by_db}
    # the smallest `count` databases: every phase then sees prompts of about 200-1000 tokens
    dbs = sorted(by_db, key=lambda db: len(schemas[db]))[:count]

    def render(q: dict) -> str:
        return f"{schemas[q['db_id']]}\n\nQuestion: {q['question']}"

    biggest = max(by_db, key=lambda db: len(by_db[db]) if db in dbs else -1)
    return Prompts(
        one_db=[render(q) for q in by_db[biggest][:count]],
        many_dbs=[render(by_db[db][0]) for db in dbs],
        many_dbs_other=[render(by_db[db][1]) for db in dbs],
    )


def request(prompt: str, **kw) -> ChatRequest:
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content=SYSTEM),
            ChatMessage(role="user", content=prompt),
        ),
        **kw,
    )
