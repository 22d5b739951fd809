"""The console summary of an eval invocation, rendered from its runs' results."""

from rich.console import Console

from eval.reporting.accuracy import Accuracy, ExRow
from eval.reporting.costs import Costs, Spend
from eval.reporting.result import RunResult
from eval.reporting.summary import print_summary, summary_table, verdict
from eval.reporting.tracking import TrackedRun
from eval.run import RunOutcome


def rows(*groups):
    return tuple(
        ExRow(group=g, questions=n, ex_bird=right / n, ex_spider=right / n)
        for g, right, n in groups
    )


def test_the_verdict_line_compares_right_answers_at_every_difficulty():
    def result(label, groups):
        return RunResult(label=label, accuracy=Accuracy(by_difficulty=rows(*groups)))

    single = result("single_pass", [("simple", 5, 6), ("moderate", 2, 4), ("all", 7, 10)])
    better = result("adaptive", [("simple", 5, 6), ("moderate", 3, 4), ("all", 8, 10)])
    worse = result("adaptive", [("simple", 4, 6), ("moderate", 4, 4), ("all", 8, 10)])
    line = verdict(single, better, None)
    assert "simple 5/6 vs 5/6" in line and "all 8/10 vs 7/10" in line
    assert "at least as many right at every difficulty" in line
    assert "fewer right on simple" in verdict(single, worse, None)


def spend(cost, busy_s=None):
    return Spend(
        calls=1, prompt_tokens=100, completion_tokens=10, tokens=110, cost_usd=cost, busy_s=busy_s
    )


def test_the_summary_puts_a_paired_interval_on_ex_and_prices_each_correct_answer():
    def outcome(label, right, **figures):
        result = RunResult(
            label=label,
            accuracy=Accuracy(
                scored=40,
                by_difficulty=(
                    ExRow(group="all", questions=40, ex_bird=right / 40, ex_spider=0.0),
                ),
                verdicts={f"q{i}": i < right for i in range(40)},
            ),
            costs=Costs(pricing="default $0.0892/h", **figures),
        )
        return RunOutcome.model_construct(
            run_dir="runs/x",
            report="runs/x/report/report.md",
            result=result,
            tracked=TrackedRun(run_id="r", experiment_id="e", tracking_uri="u", artifact_uri="a"),
        )

    single = outcome("single_pass", 0, per_question=spend(0.001))  # none right
    adaptive = outcome(
        "adaptive", 30, per_question=spend(0.003, busy_s=36.6), per_correct=spend(0.004)
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


def test_the_summary_shows_sds_buckets_and_constructs_between_the_difficulties_and_all():
    rated = RunResult(
        label="adaptive",
        accuracy=Accuracy(
            by_difficulty=rows(("simple", 2, 4), ("all", 2, 4)),
            by_sds=rows(("0-12", 1, 3), ("19-35", 1, 1)),
            by_construct=rows(("hierarchy", 0, 1), ("unnest", 1, 2)),
        ),
    )
    console = Console(width=120, record=True)
    console.print(summary_table([rated]))
    labels = [
        line.split("│")[2].strip() for line in console.export_text().splitlines() if "│" in line
    ]
    assert labels == [
        "simple",
        "SDS 0-12",
        "SDS 19-35",
        "construct hierarchy",
        "construct unnest",
        "all",
    ]


def test_each_configuration_shows_its_run_and_pool_rates():
    result = RunResult(
        label="adaptive",
        accuracy=Accuracy(
            scored=4,
            by_difficulty=rows(("all", 1, 4)),
            run_rate=0.75,
            pool_rate={"ex_bird": 0.5, "ex_columns": 0.75},
        ),
    )
    outcome = RunOutcome.model_construct(
        run_dir="runs/x",
        report="runs/x/report/report.md",
        result=result,
        tracked=TrackedRun(run_id="r", experiment_id="e", tracking_uri="u", artifact_uri="a"),
    )
    console = Console(record=True, width=250)
    print_summary([outcome], console)
    text = console.export_text()
    assert "  run rate 0.750: answers that executed without error" in text
    assert "  pool rate 0.500 (BIRD), 0.750 (columns): candidate pools that held a right" in text
