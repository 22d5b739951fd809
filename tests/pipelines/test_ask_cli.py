"""`scale-analytics ask`: argument handling and the printed answer (scripted model, real sandbox)."""

from __future__ import annotations

import json

import models
import pytest

from pipelines.ask_cli import main, parse_args


def test_evidence_is_split_from_hydra_overrides():
    args, evidence, overrides = parse_args(["How many?", "--db", "x.sqlite", "scaling=cpu_small",
                                            "evidence=France is a country", "model=replay"])
    assert args.question == "How many?" and args.db == "x.sqlite"
    assert evidence == "France is a country" and overrides == ["scaling=cpu_small", "model=replay"]


def test_missing_database_is_a_clear_error(capsys):
    assert main(["How many?", "--db", "/no/such.sqlite"]) == 2
    assert "no database file" in capsys.readouterr().err


@pytest.mark.parametrize("scaling", ["single_pass", "cpu_small"])
def test_prints_sql_preview_and_summary(tiny_db, scripted, monkeypatch, tmp_path, capsys, scaling):
    right = "SELECT name FROM singer WHERE country = 'France'"
    reply = lambda r: f"- filter\n```sql\n{right}\n```"
    client = scripted({
        "single_pass": reply, "icl/direct": reply, "icl/cot": reply, "icl/decompose": reply,
        "reasoning": lambda r: f"<sql>{right}</sql>",
        "extractor": lambda r: json.dumps({"literals": ["France"], "skeleton": "", "keywords": []}),
        "critic": lambda r: json.dumps({"error_class": "none", "suggested_fix": "", "generator_feedback": "",
                                        "feedback_kind": "warning", "complexity": 2, "verdict": "accept"}),
    })
    client.close = lambda: None
    monkeypatch.setattr(models, "build_client", lambda cfg: client)
    code = main(["Which singers are from France?", "--db", tiny_db.path, f"scaling={scaling}",
                 f"pipeline.trace.directory={tmp_path}", "pipeline.trace.mlflow=false",
                 f"pipeline.index.root={tmp_path}/no-index"])
    out = capsys.readouterr().out
    assert code == 0
    assert right in out and "Joe" in out and "Ann" in out and "2 row(s)" in out
    assert "candidates" in out and "LLM calls" in out and "tokens" in out
    assert (tmp_path / "traces.jsonl").is_file()
