"""``scale-analytics db load``: the claims benchmark copied into a real PostgreSQL server
(``tests/conftest.py``) holds every row of the file, its keys and its column descriptions."""

from __future__ import annotations

import sqlite3

from eval.cli.db_cli import main
from pipelines.indexing.examples.dialect import translated
from pipelines.indexing.examples.own_examples import own_examples_of
from pipelines.schema import introspect


def test_the_copy_holds_every_table_row_key_and_description(claims_pg, postgres):
    source, server_db = claims_pg
    with sqlite3.connect(source.path) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
            )
        ]
        counts = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    with postgres.admin("claims") as conn:
        copied = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    assert copied == counts and sum(counts.values()) > 100_000
    view = introspect(server_db, sample_values=0)
    assert [t.name for t in view.tables] == tables
    claims = next(t for t in view.tables if t.name == "claims")
    described = {c.name: c.description for c in claims.columns}
    assert described["claim_id"].startswith("Unique identifier of the claim")
    assert any(f.table == "claims" and f.ref_table == "members" for f in view.foreign_keys)


def test_load_refuses_what_is_not_a_server_uri(capsys):
    assert main(["load", "claims", "/tmp/claims.sqlite"]) == 2
    assert "postgresql://" in capsys.readouterr().err


def test_a_benchmark_answered_from_the_server_grades_against_its_file(claims_pg, demo, postgres):
    """``benchmark.servers``: the questions go to the server copy, the gold SQL to the file."""
    import sqlglot

    from core.config import load_config
    from eval.grading.scoring import score_predictions
    from eval.loaders import load_benchmark

    _, server_db = claims_pg
    cfg = load_config(
        [
            "benchmark=demo",
            f"benchmark.data_dir={demo.data_dir}",
            "benchmark.limit=8",
            f"+benchmark.servers.claims={server_db.path}",
        ]
    )
    benchmark = load_benchmark(cfg.benchmark)
    first = benchmark.tasks[0]
    assert first.db.dialect == "postgres" and first.db.path == server_db.path
    assert first.gold_database.path == str(demo.database)
    assert first.db.description_dir == first.gold_database.description_dir
    # the file's own solved examples go with the copy, in the server's dialect: the pipeline's
    # rules and prompts see them
    assert first.db.examples is not None
    on_file, on_server = own_examples_of(first.gold_database), own_examples_of(first.db)
    assert [e.question for e in on_server] == [e.question for e in on_file] != []
    assert [e.sql for e in on_server] == [translated(e.sql, "sqlite", "postgres") for e in on_file]
    # the gold queries in PostgreSQL's dialect, one of them made wrong
    predictions = {
        t.task_id: sqlglot.transpile(t.gold_sql, read="sqlite", write="postgres")[0]
        for t in benchmark.tasks
    }
    predictions[first.task_id] = "SELECT 0 AS nothing"
    report = score_predictions(benchmark, predictions)
    correct = [v.task_id for v in report.verdicts if v.ex_bird]
    assert len(report.verdicts) == 8 and first.task_id not in correct and len(correct) == 7


def test_the_evidence_of_a_server_copy_names_the_servers_functions(claims_pg, demo, postgres):
    """A question whose evidence names SQLite's date calls says them in PostgreSQL's dialect on
    the server copy; the translated calls run there."""
    from core.config import load_config
    from eval.loaders import load_benchmark

    _, server_db = claims_pg
    overrides = ["benchmark=demo", f"benchmark.data_dir={demo.data_dir}"]
    on_file = load_benchmark(load_config(overrides).benchmark).tasks
    on_server = load_benchmark(
        load_config([*overrides, f"+benchmark.servers.claims={server_db.path}"]).benchmark
    ).tasks
    changed = [
        (file.evidence, server.evidence)
        for file, server in zip(on_file, on_server, strict=True)
        if file.evidence != server.evidence
    ]
    assert len(changed) >= 3
    assert all("julianday" in f or "strftime" in f for f, _ in changed)
    assert not any("julianday" in s or "strftime" in s for _, s in changed)
    lag = next(s for _, s in changed if "received_date" in s and "service_end_date" in s)
    days = lag.split(" = ")[-1].rstrip(".")
    with postgres.admin("claims") as conn:
        assert conn.execute(f"SELECT {days} FROM claims LIMIT 1").fetchone() is not None
