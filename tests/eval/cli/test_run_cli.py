"""``scale-analytics eval`` and ``report`` end to end with the real sweep services: Ray sandbox
actors, the configured pipelines built inside worker actors, and the replay model backend
(an empty cassette, so every model call misses and answers degrade — the wiring is under test,
not the model)."""

import shlex

import polars as pl
import pytest
from mlflow.tracking import MlflowClient

from eval.cli.report_cli import main as report_main
from eval.cli.run_cli import main as eval_main

pytestmark = pytest.mark.ray


def test_multirun_eval_then_report(tiny_spider, tmp_path, capsys):
    runs = tmp_path / "runs"
    overrides = [
        "benchmark=spider_dev",
        f"benchmark.data_dir={tiny_spider}",
        f"paths.runs={runs}",
        "experiment.name=cli",
        "model=replay",
        f"model.slots.default.cassette={tmp_path / 'empty.jsonl'}",
        "model.slots.default.record=false",
        f"pipeline.index.root={tmp_path / 'no-index'}",
        "pipeline.index.auto_build=false",
        "++sweep.progress=false",
        "++sweep.ves_iterations=1",
        "--multirun",
        "scaling=single_pass,cpu_small",
    ]
    assert eval_main(overrides) == 0
    printed = capsys.readouterr().out
    assert "Execution accuracy" in printed
    (hint,) = [line for line in printed.splitlines() if "scale-analytics report" in line]
    report_argv = shlex.split(hint.split("scale-analytics report", 1)[1])
    assert report_argv == [f"paths.runs={runs}", "experiment.name=cli"]
    assert "retrieval: off (the single-pass pipeline retrieves nothing)" in printed
    assert (
        "retrieval: off (cells: music: not built" in printed
        and "No question was answered with" in printed
    )

    client = MlflowClient(f"sqlite:///{runs}/mlflow.db")
    experiment = client.get_experiment_by_name("cli")
    found = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    assert set(found) == {"scaling=single_pass", "scaling=cpu_small"}
    for run in found.values():
        run_dir = run.data.tags["run_dir"]
        frame = pl.read_parquet(f"{run_dir}/predictions.parquet")
        assert frame.height == 6
        assert (
            frame.get_column("gold_error").is_not_null().sum() == 1
        )  # graded on the sandbox actors
        assert frame.get_column("degraded").all() or frame.get_column("error").is_not_null().all()
        assert run.data.metrics["skipped"] == 1
    single = found["scaling=single_pass"]
    errors = (
        pl.read_parquet(f"{single.data.tags['run_dir']}/predictions.parquet")
        .get_column("error")
        .to_list()
    )
    assert all("CassetteMiss" in e for e in errors)  # the replay client really ran in the workers
    assert list(
        (runs / "cli").glob("*/traces/*/traces.jsonl")
    )  # each worker traced into the run dir

    assert report_main(report_argv) == 0  # the command eval printed
    table = pl.read_csv(runs / "cli" / "report" / "ablation.csv")
    assert sorted(table.get_column("configuration").to_list()) == [
        "scaling=cpu_small",
        "scaling=single_pass",
    ]
    assert (runs / "cli" / "report" / "cost_vs_accuracy.png").exists()


def test_bad_overrides_are_reported_not_raised(capsys):
    assert eval_main(["scaling=no_such_profile"]) == 2
    printed = capsys.readouterr()
    assert "no_such_profile" in printed.err and not printed.out  # errors go to stderr, on one line
    assert len(printed.err.strip().splitlines()) == 1
    assert eval_main(["scaling=single_pass,default"]) == 2
    assert "--multirun" in capsys.readouterr().err
    assert report_main([]) == 2
