"""Demo loader: builds the embedded claims benchmark on first use, then reads it as BIRD."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "eval.demo", reason="eval.demo (the demo benchmark generator) is not available yet"
)
if not hasattr(__import__("eval.demo", fromlist=["build_demo"]), "build_demo"):
    pytest.skip("eval.demo.build_demo is not available yet", allow_module_level=True)

from eval.loaders import BenchmarkSpec, load_benchmark


def test_demo_builds_then_loads_every_question(tmp_path):
    spec = BenchmarkSpec(name="demo", kind="demo", data_dir=str(tmp_path / "demo"))
    bench = load_benchmark(spec)
    assert Path(tmp_path / "demo" / "dev.json").is_file()
    assert bench.skipped == ()
    assert len(bench.tasks) == bench.total_questions >= 60
    assert {t.db.db_id for t in bench.tasks} == {"claims"}
    assert all(t.difficulty in {"simple", "moderate", "challenging"} for t in bench.tasks)
    assert all(t.gold_sql for t in bench.tasks)
    assert bench.tasks[0].db.description_dir is not None
    assert any(t.evidence for t in bench.tasks)

    again = load_benchmark(spec)  # second load reuses the built files
    assert again.tasks == bench.tasks
