"""`scale-analytics ask`: argument handling and the printed answer (scripted model, real sandbox)."""

from __future__ import annotations

import json

import pytest

import models
from pipelines.ask_cli import AskOutput, database_ref, main, parse_args


def test_evidence_is_a_flag_and_every_key_value_goes_to_hydra():
    args, overrides = parse_args(
        [
            "How many?",
            "--db",
            "x.sqlite",
            "scaling=cpu_small",
            "--evidence",
            "France is a country",
            "model=replay",
        ]
    )
    assert args.question == "How many?" and args.db == "x.sqlite"
    assert args.evidence == "France is a country"
    assert overrides == ["scaling=cpu_small", "model=replay"]
    _, overrides = parse_args(["How many?", "--db", "x.sqlite", "evidence=France"])
    assert overrides == ["evidence=France"]  # a key=value is Hydra's, which refuses this one


@pytest.mark.parametrize(
    "argv",
    [
        ["How many singers?", "--db", "x.sqlite", "model=qwen2.5-coder-1.5b", "scaling=adaptive"],
        ["model=qwen2.5-coder-1.5b", "--db", "x.sqlite", "How many singers?", "scaling=adaptive"],
        ["--db", "x.sqlite", "model=qwen2.5-coder-1.5b", "scaling=adaptive", "How many singers?"],
    ],
)
def test_the_question_is_the_argument_that_is_not_an_override(argv):
    args, overrides = parse_args(argv)
    assert args.question == "How many singers?" and args.db == "x.sqlite" and args.evidence == ""
    assert overrides == ["model=qwen2.5-coder-1.5b", "scaling=adaptive"]


def test_a_question_with_an_equals_sign_is_still_the_question():
    args, overrides = parse_args(["Which singers have age = 30 or rating=4?", "--db", "x.sqlite"])
    assert args.question == "Which singers have age = 30 or rating=4?" and overrides == []


def test_words_past_the_question_go_to_hydra():
    args, overrides = parse_args(["How many?", "--db", "x.sqlite", "model=replay", "singers"])
    assert args.question == "How many?" and overrides == ["model=replay", "singers"]


def test_no_question_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["--db", "x.sqlite", "model=replay"])
    assert exited.value.code == 2 and "the question is missing" in capsys.readouterr().err


def test_missing_database_is_a_clear_error(capsys):
    assert main(["How many?", "--db", "/no/such.sqlite"]) == 2
    assert "no database file" in capsys.readouterr().err


def test_a_description_folder_beside_the_database_is_used_unless_one_is_given(tmp_path):
    db = tmp_path / "bird" / "schools.sqlite"
    db.parent.mkdir()
    db.write_bytes(b"")
    assert database_ref(str(db), None, None).description_dir is None
    (db.parent / "database_description").mkdir()
    assert database_ref(str(db), None, None).description_dir == str(
        db.parent / "database_description"
    )
    assert database_ref(str(db), "s", "/elsewhere").description_dir == "/elsewhere"


@pytest.mark.parametrize("scaling", ["single_pass", "cpu_small"])
def test_prints_sql_preview_and_summary(tiny_db, scripted, monkeypatch, tmp_path, capsys, scaling):
    scripted_ask(scripted, monkeypatch)
    code = main(
        [
            "Which singers are from France?",
            "--db",
            tiny_db.path,
            f"scaling={scaling}",
            f"pipeline.trace.directory={tmp_path}",
            f"pipeline.index.root={tmp_path}/no-index",
            "pipeline.index.auto_build=false",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert RIGHT in out and "Joe" in out and "Ann" in out and "2 row(s)" in out
    assert "candidates" in out and "LLM calls" in out and "tokens" in out
    assert "retrieval: off (" in out  # never silently off: auto_build=false, nothing built
    assert (tmp_path / "traces.jsonl").is_file()


RIGHT = "SELECT name FROM singer WHERE country = 'France'"


def scripted_ask(scripted, monkeypatch):
    reply = lambda r: f"- filter\n```sql\n{RIGHT}\n```"
    client = scripted(
        {
            "single_pass": reply,
            "icl/direct": reply,
            "icl/cot": reply,
            "icl/decompose": reply,
            "reasoning": lambda r: f"<sql>{RIGHT}</sql>",
            "extractor": lambda r: json.dumps(
                {"literals": ["France"], "skeleton": "", "keywords": []}
            ),
            "critic": lambda r: json.dumps(
                {
                    "error_class": "none",
                    "suggested_fix": "",
                    "generator_feedback": "",
                    "feedback_kind": "warning",
                    "complexity": 2,
                    "verdict": "accept",
                }
            ),
        }
    )
    client.close = lambda: None
    monkeypatch.setattr(models, "build_client", lambda cfg: client)
    return client


@pytest.mark.parametrize("scaling", ["cpu_small", "adaptive"])
def test_json_prints_exactly_one_object_with_the_answer(
    tiny_db, scripted, monkeypatch, tmp_path, capsys, scaling
):
    scripted_ask(scripted, monkeypatch)
    code = main(
        [
            "Which singers are from France?",
            "--db",
            tiny_db.path,
            "--json",
            f"scaling={scaling}",
            f"pipeline.index.root={tmp_path}/no-index",
            "pipeline.index.auto_build=false",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    data = json.loads(captured.out)  # the whole of stdout is one object
    assert captured.out.count("\n") == 1
    AskOutput.model_validate_json(captured.out)
    assert data["sql"] == RIGHT and data["error"] is None and data["db_id"] == "concerts"
    assert data["result"]["columns"] == ["name"] and sorted(data["result"]["rows"]) == [
        ["Ann"],
        ["Joe"],
    ]
    assert data["result"]["row_count"] == 2
    assert data["candidates"] and {"sql", "producer", "bucket", "error"} <= set(
        data["candidates"][0]
    )
    assert (
        len({c["bucket"] for c in data["candidates"]}) == 1
    )  # every candidate returned the same rows
    assert {
        "answered_by",
        "steps",
        "seconds",
        "degraded",
        "degradation_reasons",
        "producer",
    } <= set(data)
    assert data["usage"]["calls"] >= 1 and data["usage"]["prompt_tokens"] > 0
    if (
        scaling == "adaptive"
    ):  # the adaptive pipeline names the step that answered, with each step's cost
        assert (
            data["answered_by"]
            and data["steps"]
            and {"step", "calls", "seconds"} <= set(data["steps"][0])
        )
    assert {"cached_prompt_tokens", "completion_tokens"} <= set(data["usage"])
    assert data["retrieval"]["used"] == [] and data["retrieval"]["available"] == []
    assert data["retrieval"]["status"].startswith("retrieval: off (")


def test_ask_ensures_the_databases_indexes_and_reports_what_served(
    tiny_db, scripted, monkeypatch, tmp_path, capsys
):
    from pipelines.indexing.builder import ensure

    scripted_ask(scripted, monkeypatch)
    seen = []

    def fake_ensure(cfg, dbs, **kw):
        seen.append([db.db_id for db in dbs])
        return ensure.RetrievalStatus(
            needed=("cells", "examples"), cells=("concerts",), examples=True, built=("concerts",)
        )

    monkeypatch.setattr(ensure, "ensure_indexes", fake_ensure)
    main(
        [
            "Which singers are from France?",
            "--db",
            tiny_db.path,
            "--json",
            "scaling=cpu_small",
            f"pipeline.index.root={tmp_path}/no-index",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert seen == [["concerts"]]
    assert data["retrieval"]["available"] == ["cells", "examples"] and data["retrieval"][
        "built"
    ] == ["concerts"]
    # the index root holds nothing, so neither retriever served this question: said, not hidden
    assert data["retrieval"]["used"] == [] and data["retrieval"]["status"].startswith(
        "retrieval: off ("
    )


def test_ask_output_keeps_values_json_safe():
    from decimal import Decimal

    from pipelines.ask_cli import _preview
    from pipelines.contracts import ExecutionResult

    preview = _preview(
        ExecutionResult(
            rows=((Decimal("1.5"), b"\x00\xff", float("nan"), None, True),),
            columns=("a", "b", "c", "d", "e"),
            row_count=1,
            hash="h",
        ),
        rows=5,
    )
    assert json.loads(preview.model_dump_json())["rows"] == [["1.5", "00ff", "nan", None, True]]
