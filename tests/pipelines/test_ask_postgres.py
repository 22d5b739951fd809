"""`scale-analytics ask --db postgresql://…` end to end: a scripted model, the real sandbox and the
claims benchmark copied into a real PostgreSQL server (``tests/conftest.py``)."""

from __future__ import annotations

import json
import sqlite3

import pytest

import models
from pipelines.ask_cli import database_ref, main

DENIED = "SELECT count(*) AS denied FROM claims WHERE claim_status = 'Denied'"


def _script(scripted, monkeypatch):
    reply = lambda r: f"```sql\n{DENIED}\n```"
    client = scripted(
        {
            "single_pass": reply,
            "icl/direct": reply,
            "icl/cot": reply,
            "icl/decompose": reply,
            "reasoning": lambda r: f"<sql>{DENIED}</sql>",
            "extractor": lambda r: json.dumps({"literals": [], "skeleton": "", "keywords": []}),
        }
    )
    client.close = lambda: None
    monkeypatch.setattr(models, "build_client", lambda cfg: client)
    return client


def test_a_uri_names_a_postgres_database():
    db = database_ref("postgresql://reader@db.example:5432/claims", None, None)
    assert (db.dialect, db.db_id, db.path) == (
        "postgres",
        "claims",
        "postgresql://reader@db.example:5432/claims",
    )
    assert database_ref("postgresql://reader@db/claims", "mine", None).db_id == "mine"


def test_examples_name_a_server_databases_own_questions_and_a_missing_file_is_refused(tmp_path):
    examples = tmp_path / "claims.examples.yml"
    examples.write_text("- question: q\n  sql: SELECT 1\n")
    db = database_ref("postgresql://reader@db/claims", None, None, str(examples))
    assert db.examples == str(examples)
    with pytest.raises(FileNotFoundError, match="no examples file"):
        database_ref("postgresql://reader@db/claims", None, None, str(tmp_path / "none.yml"))


def test_ask_answers_from_postgres_as_from_the_sqlite_copy(
    claims_pg, scripted, monkeypatch, tmp_path, capsys
):
    source, server_db = claims_pg
    client = _script(scripted, monkeypatch)
    code = main(
        [
            "How many claims were denied?",
            "--db",
            server_db.path,
            "--json",
            "scaling=single_pass",
            f"pipeline.index.root={tmp_path}/no-index",
            "pipeline.index.auto_build=false",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["error"] is None and out["db_id"] == "claims"
    with sqlite3.connect(source.path) as conn:
        (expected,) = conn.execute(DENIED).fetchone()
    assert out["result"]["rows"] == [[expected]] and expected > 0
    prompt = "\n".join(m.content for m in client.requests[0][1].messages)
    assert "PostgreSQL" in prompt and "CREATE TABLE claims (" in prompt


def test_a_role_that_can_write_stops_ask_with_one_line(postgres, capsys):
    code = main(["How many?", "--db", postgres.uri("typed", "postgres"), "model=replay"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "superuser" in err and "allow_write_role" in err
