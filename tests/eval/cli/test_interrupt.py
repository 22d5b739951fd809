"""Ctrl-C on a real ``scale-analytics eval`` (its own process, Ray, the replay model): it stops
within seconds with one line and exit code 130, leaves no process of its session running, and
the rerun answers only the questions the first run had not saved. And a time budget stops the
same sweep early, the next configuration answering the same questions."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from core.stop import descendants

pytestmark = [pytest.mark.ray, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parents[3]
QUESTIONS = 8
# Each gold query counts to two million: ~0.4 s in the sandbox, so the sweep is still running
# when the first answer is on disk.
SLOW_GOLD = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) "
    "SELECT count(*) FROM c"
)


def slow_spider(root: Path) -> Path:
    (root / "database" / "music").mkdir(parents=True)
    with sqlite3.connect(root / "database" / "music" / "music.sqlite") as conn:
        conn.execute("CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT)")
    conn.close()
    records = [
        {"db_id": "music", "question": f"Count to {i}?", "query": SLOW_GOLD.format(n=2_000_000 + i)}
        for i in range(QUESTIONS)
    ]
    (root / "dev.json").write_text(json.dumps(records))
    return root


def session_processes(sid: int) -> list[str]:
    """The live processes of session ``sid`` (the command's, Ray's and any model server's)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(f"{entry.name} {command}")
    return found


def eval_command(tmp_path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "core.cli",
        "eval",
        "benchmark=spider_dev",
        f"benchmark.data_dir={slow_spider(tmp_path / 'spider')}",
        f"paths.runs={tmp_path / 'runs'}",
        "experiment.name=interrupt",
        "model=replay",
        f"model.slots.default.cassette={tmp_path / 'empty.jsonl'}",
        "model.slots.default.record=false",
        f"pipeline.index.root={tmp_path / 'no-index'}",
        "pipeline.index.auto_build=false",
        "scaling=single_pass",
        "sweep.in_flight=1",
        "sweep.flush_every=1",
        "sweep.max_restarts=0",
        "sweep.max_task_retries=0",
        "sweep.progress=false",
        "sweep.mlflow_traces=false",
        "++sweep.ves_iterations=1",
    ]


def saved_ids(runs: Path) -> set[str]:
    parts = list(runs.glob("interrupt/*/parts/part-*.parquet"))
    return set(pl.read_parquet(parts).get_column("task_id")) if parts else set()


def interrupt(command: list[str], runs: Path, signum: int, *, group: bool) -> set[str]:
    """Run ``command`` until it saves another answer, send ``signum`` (to its process group, as
    a terminal's Ctrl-C does, or to it alone, as ``kill`` does), check the stop; the saved ids."""
    before = saved_ids(runs)
    proc = subprocess.Popen(
        command,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(saved_ids(runs)) <= len(before):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no question answered within 120 s"
        time.sleep(0.1)
    started = descendants(proc.pid)
    (os.killpg if group else os.kill)(proc.pid, signum)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 10, err
    assert proc.returncode == 128 + signum, err
    (line,) = err.splitlines()  # one line, no Ray stack trace ("logging.cc … SIGTERM received")
    assert line.startswith("scale-analytics eval: sweep interrupted after"), err
    assert "Traceback" not in out and "(raylet)" not in out
    time.sleep(1)
    assert session_processes(proc.pid) == [], started  # Ray's daemons and workers are gone
    return saved_ids(runs)


def test_ctrl_c_or_sigterm_stop_eval_cleanly_and_the_rerun_resumes(tmp_path):
    runs = tmp_path / "runs"
    command = eval_command(tmp_path)
    interrupted = interrupt(command, runs, signal.SIGINT, group=True)
    saved = interrupt(command, runs, signal.SIGTERM, group=False)
    assert interrupted < saved and len(saved) < QUESTIONS

    resumed_at = time.time()
    rerun = subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rerun.returncode == 0, rerun.stderr
    (run_dir,) = runs.glob("interrupt/*")
    answered = pl.read_parquet(run_dir / "predictions.parquet").get_column("task_id")
    assert answered.n_unique() == answered.len() == QUESTIONS
    traces = [
        json.loads(line)
        for path in run_dir.glob("traces/*/traces.jsonl")
        for line in path.read_text().splitlines()
    ]
    asked_again = [t["task_id"] for t in traces if t["started_unix_s"] >= resumed_at]
    assert sorted(asked_again) == sorted(set(answered) - saved)  # only the unsaved ones


def test_a_budget_answers_what_fits_and_the_other_configuration_the_same_questions(
    tmp_path, capsys
):
    from eval.cli.run_cli import main as eval_main

    command = eval_command(tmp_path)[4:]  # the overrides, run in this process
    overrides = [o for o in command if not o.startswith("scaling=")]
    code = eval_main(
        [*overrides, "sweep.budget_s=1", "sweep.min_questions=2", "--multirun"]
        + ["scaling=single_pass,cpu_small"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "as many questions as this machine's pace fits" in printed
    (line,) = [line for line in printed.splitlines() if line.startswith("this machine answers")]
    # the budget binds below the wanted 2: the first answer ends past it, and the line says
    # what 2 would take
    assert f"1 of {QUESTIONS} questions fit sweep.budget_s=1; 2 questions would take" in line
    runs = list((tmp_path / "runs" / "interrupt").glob("*/predictions.parquet"))
    assert len(runs) == 2 and all(pl.read_parquet(run).height == 1 for run in runs)
