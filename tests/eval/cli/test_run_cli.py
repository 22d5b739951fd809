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


def test_the_verdict_line_compares_right_answers_at_every_difficulty():
    from eval.cli.run_cli import verdict
    from eval.run import RunOutcome

    def outcome(label, rows):
        table = tuple(
            {"difficulty": d, "questions": n, "ex_bird": right / n, "ex_spider": right / n}
            for d, right, n in rows
        )
        return RunOutcome.model_construct(label=label, ex_table=table)

    single = outcome("single_pass", [("simple", 5, 6), ("moderate", 2, 4), ("all", 7, 10)])
    better = outcome("adaptive", [("simple", 5, 6), ("moderate", 3, 4), ("all", 8, 10)])
    worse = outcome("adaptive", [("simple", 4, 6), ("moderate", 4, 4), ("all", 8, 10)])
    line = verdict(single, better)
    assert "simple 5/6 vs 5/6" in line and "all 8/10 vs 7/10" in line
    assert "at least as many right at every difficulty" in line
    assert "fewer right on simple" in verdict(single, worse)


def test_the_summary_puts_a_paired_interval_on_ex_and_prices_each_correct_answer():
    from rich.console import Console

    from eval.cli.run_cli import print_summary
    from eval.reporting.tracking import TrackedRun
    from eval.run import RunOutcome

    def outcome(label, right, metrics):
        verdicts = {f"q{i}": i < right for i in range(40)}
        table = ({"difficulty": "all", "questions": 40, "ex_bird": right / 40, "ex_spider": 0.0},)
        return RunOutcome.model_construct(
            label=label,
            run_dir="runs/x",
            report="runs/x/report/report.md",
            ex_table=table,
            verdicts=verdicts,
            metrics={"questions_scored": 40, "ex_bird": right / 40, **metrics},
            tracked=TrackedRun(run_id="r", experiment_id="e", tracking_uri="u", artifact_uri="a"),
            pricing="default $0.0892/h",
            reference="gpt-4.1-mini",
        )

    single = outcome("single_pass", 10, {"cost_usd_per_question": 0.001})  # and none right
    single = single.model_copy(update={"verdicts": dict.fromkeys(single.verdicts, False)})
    adaptive = outcome(
        "adaptive",
        30,
        {
            "cost_usd_per_question": 0.003,
            "cost_usd_per_correct": 0.004,
            "busy_s_per_question": 36.6,
        },
    )
    console = Console(record=True, width=250)
    print_summary([single, adaptive], console, baseline="adaptive")
    text = console.export_text()
    # single pass is right on none of the 30 questions adaptive gets right
    assert "\N{MINUS SIGN}0.750 [\N{MINUS SIGN}" in text
    assert "ΔEX vs adaptive [95% CI]" in text and "baseline" in text
    assert "model s" in text and "36.6" in text  # the model's seconds, cached calls included
    assert "adaptive against single_pass" in text and "ΔEX +0.750 [+0.6" in text
    assert "cost: $0.001/question, n/a (none correct)/correct at the configured prices" in text
    assert "cost: $0.003/question, $0.004/correct at the configured prices" in text

    console = Console(record=True, width=250)
    print_summary([adaptive, single], console, baseline="adaptive")  # the baseline first
    assert "adaptive against single_pass" in console.export_text()


def test_the_summary_shows_sds_buckets_between_the_difficulties_and_all():
    from rich.console import Console

    from eval.cli.run_cli import summary_table
    from eval.run import RunOutcome

    def row(key, name, n):
        return {key: name, "questions": n, "ex_bird": 0.5, "ex_spider": 0.5}

    rated = RunOutcome.model_construct(
        label="adaptive",
        ex_table=(row("difficulty", "simple", 4), row("difficulty", "all", 4)),
        sds_table=(row("sds_bucket", "0-12", 3), row("sds_bucket", "19-35", 1)),
    )
    console = Console(width=120, record=True)
    console.print(summary_table([rated]))
    labels = [
        line.split("│")[2].strip() for line in console.export_text().splitlines() if "│" in line
    ]
    assert labels == ["simple", "SDS 0-12", "SDS 19-35", "all"]
