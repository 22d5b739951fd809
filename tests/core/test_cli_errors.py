"""Every subcommand turns bad overrides, paths and files into one line on stderr and exit code 2."""

from __future__ import annotations

import sqlite3

import pytest

from core.cli import main
from core.cli_errors import one_line


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    return str(path)


CASES = [
    (
        ["ask", "How many?", "--db", "{db}", "scaling=no_such_profile"],
        "Could not find 'scaling/no_such_profile'",
    ),
    (
        ["ask", "How many?", "--db", "{db}", "scaling.no_such_key=1"],
        "Key 'no_such_key' is not in struct",
    ),
    (["ask", "How many?", "--db", "{tmp}/missing.sqlite"], "no database file"),
    (
        ["ask", "scaling=no_such_profile", "How many?", "--db", "{db}"],
        "Could not find 'scaling/no_such_profile'",
    ),
    (["ask", "How many?", "--db", "{db}", "stray"], "cannot parse the override 'stray'"),
    (["eval", "benchmark=no_such_benchmark"], "Could not find 'benchmark/no_such_benchmark'"),
    (
        ["eval", "sweep.workers=0"],
        "invalid SweepSettings: workers: Input should be greater than or equal to 1",
    ),
    (["eval", "--bogus"], "--bogus"),
    (["eval", "benchmark.limit=[1"], "cannot parse the override 'benchmark.limit=[1'"),
    (["eval", "stray"], "cannot parse the override 'stray'"),
    (["demo", "pipeline=no_such_pipeline"], "Could not find 'pipeline/no_such_pipeline'"),
    (["report"], "which experiment? experiment=NAME"),
    (["report", "paths.runs={tmp}"], "which experiment? experiment=NAME"),
    (["report", "experiment=ablation", "no_such_key=1"], "Key 'no_such_key' is not in struct"),
    (["report", "experiment=ablation", "stray"], "cannot parse the override 'stray'"),
    (["index", "benchmark=no_such_benchmark"], "Could not find 'benchmark/no_such_benchmark'"),
    (
        ["index", "paths.runs=${oc.env:SCALE_ANALYTICS_NO_SUCH_VARIABLE}"],
        "SCALE_ANALYTICS_NO_SUCH_VARIABLE",
    ),
    (["models", "list", "paths.no_such_key=1"], "Key 'no_such_key' is not in struct"),
    (
        ["score", "{tmp}/missing.jsonl", "benchmark=spider_dev", "benchmark.data_dir={tmp}"],
        "not found",
    ),
    (
        ["score", "{tmp}/preds.jsonl", "benchmark=no_such_benchmark"],
        "Could not find 'benchmark/no_such_benchmark'",
    ),
    (
        ["score", "benchmark.no_such_key=1", "{tmp}/preds.jsonl"],
        "Key 'no_such_key' is not in struct",
    ),
    (
        ["score", "{tmp}/preds.jsonl", "benchmark.limit=[1"],
        "cannot parse the override 'benchmark.limit=[1'",
    ),
    (["score", "{tmp}/preds.jsonl", "stray"], "cannot parse the override 'stray'"),
    (["cheatsheet", "show", "pipeline.cheatsheet.root=null"], "pipeline.cheatsheet.root is null"),
    (
        ["cheatsheet", "show", "--db", "x", "benchmark=no_such_benchmark"],
        "Could not find 'benchmark/no_such_benchmark'",
    ),
]


@pytest.mark.parametrize(
    ("argv", "expected"), CASES, ids=[" ".join(c[0][:2]) + f" #{i}" for i, c in enumerate(CASES)]
)
def test_bad_input_is_one_line_on_stderr(argv, expected, db, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SCALE_ANALYTICS_TRACEBACK", raising=False)
    monkeypatch.delenv("SCALE_ANALYTICS_NO_SUCH_VARIABLE", raising=False)
    code = main([a.replace("{db}", db).replace("{tmp}", str(tmp_path)) for a in argv])
    printed = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in printed.out + printed.err
    lines = printed.err.strip().splitlines()
    assert len(lines) == 1, printed.err
    assert lines[0].startswith(f"scale-analytics {argv[0]}: ") and expected in lines[0], lines[0]
    assert not printed.out.strip()  # errors never go to stdout


@pytest.mark.parametrize(
    "bad", ["scaling=no_such_profile", "benchmark.limit=[1", "stray", "+scaling=x"]
)
def test_a_bad_override_reads_the_same_in_every_subcommand(bad, db, tmp_path, capsys):
    said = {}
    for argv in (
        ["eval", bad],
        ["ask", "How many?", "--db", db, bad],
        ["score", str(tmp_path / "p.jsonl"), bad],
        ["report", bad],
        ["cheatsheet", "show", bad],
    ):
        assert main(argv) == 2
        said[argv[0]] = capsys.readouterr().err.strip().removeprefix(f"scale-analytics {argv[0]}: ")
    assert len(set(said.values())) == 1, said


def test_the_traceback_is_there_on_request(monkeypatch):
    from hydra.errors import MissingConfigException

    monkeypatch.setenv("SCALE_ANALYTICS_TRACEBACK", "1")
    with pytest.raises(MissingConfigException):
        main(["models", "list", "paths=no_such_paths"])


def test_one_line_keeps_what_each_cause_adds():
    try:
        try:
            raise RuntimeError("Key 'x' is not in struct\n    full_key: a.x\n    object_type=dict")
        except RuntimeError as inner:
            raise ValueError(
                "Could not override 'a.x'.\nTo append to your config use +a.x=1"
            ) from inner
    except ValueError as exc:
        text = one_line(exc)
    assert (
        text
        == "Could not override 'a.x': To append to your config use +a.x=1: Key 'x' is not in struct"
    )
