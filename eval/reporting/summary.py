"""The console summary of an ``eval`` invocation, rendered from its runs' results.

    [RunOutcome, ...] ──► print_summary ──► EX table (difficulties, SDS buckets, constructs, all)
                                         ├─► side by side, ΔEX with paired intervals (several runs)
                                         ├─► one verdict line per pair of configurations
                                         └─► per configuration: pace, run and pool rates,
                                             retrieval, choices, cost, judge, and where the run
                                             dir, report and MLflow run are

The intervals, cost texts, rate, judge and retrieval lines are asked of their modules first, then
everything is laid out here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core.types import Frozen
from eval.grading.judge import judge_lines
from eval.metrics.bootstrap import DiffCI
from eval.reporting.accuracy import rate_lines
from eval.reporting.compare import pair_differences, paired_intervals
from eval.reporting.costs import CostTexts, cost_texts
from eval.reporting.result import RunResult
from eval.reporting.retrieval import NO_RETRIEVAL, retrieval_lines

if TYPE_CHECKING:
    from eval.run import RunOutcome


class _Shown(Frozen):
    """What the summary shows of one run beside its result, asked of the other modules."""

    costs: CostTexts
    rates: tuple[str, ...]
    judge: tuple[str, ...]
    retrieval: tuple[str, ...]


def print_summary(
    outcomes: Sequence[RunOutcome], console: Console, baseline: str | None = None
) -> None:
    """The tables, then a few lines per configuration; ``baseline`` (the experiment's, when it
    names one of them; else the first) is what the others' ΔEX is measured against. The verdict
    lines say how the named baseline fares against each other configuration (without one: each
    other configuration against the first)."""
    results = [o.result for o in outcomes]
    labels = [r.label for r in results]
    measured_against = baseline if baseline in labels else labels[0]
    pairs = (
        [(labels[0], other) for other in labels[1:]]
        if baseline not in labels
        else [(other, baseline) for other in labels if other != baseline]
    )
    verdicts = {r.label: r.accuracy.verdicts for r in results}
    intervals = paired_intervals(verdicts, measured_against) if len(results) > 1 else {}
    differences = pair_differences(verdicts, [(measured, ref) for ref, measured in pairs])
    shown = {
        r.label: _Shown(
            costs=cost_texts(r.costs, r.accuracy.scored),
            rates=tuple(rate_lines(r.accuracy)),
            judge=tuple(judge_lines(r.judge)),
            retrieval=tuple(
                retrieval_lines(
                    r.retrieval.model_copy(
                        update={"status": r.retrieval.status or "retrieval: unknown"}
                    )
                )
            ),
        )
        for r in results
    }
    console.print(summary_table(results))
    if len(results) > 1:
        console.print(comparison_table(results, measured_against, intervals, shown))
        by_label = dict(zip(labels, results))
        for (reference, measured), ci in zip(pairs, differences):
            console.print(verdict(by_label[reference], by_label[measured], ci))
    for outcome in outcomes:
        print_run(outcome, shown[outcome.result.label], console)


def summary_table(results: Sequence[RunResult]) -> Table:
    table = Table(title="Execution accuracy")
    for column in (
        "configuration",
        "difficulty",
        "questions",
        "EX (BIRD)",
        "EX (Spider)",
        "EX (columns)",
    ):
        table.add_column(
            column, justify="left" if column in ("configuration", "difficulty") else "right"
        )
    for result in results:
        # difficulty rows, then SDS buckets and constructs where the questions carry them, "all"
        rows = result.accuracy.by_difficulty
        shown = [
            *((row.group, row) for row in rows[:-1]),
            *((f"SDS {row.group}", row) for row in result.accuracy.by_sds),
            *((f"construct {row.group}", row) for row in result.accuracy.by_construct),
            *((row.group, row) for row in rows[-1:]),
        ]
        for group, row in shown:
            table.add_row(
                result.label if group == "all" else "",
                group,
                str(row.questions),
                _fmt(row.ex_bird),
                _fmt(row.ex_spider),
                _fmt(row.ex_columns),
                end_section=group == "all",
            )
    return table


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def comparison_table(
    results: Sequence[RunResult],
    baseline: str,
    intervals: dict[str, DiffCI],
    shown: dict[str, _Shown],
) -> Table:
    """The configurations side by side on the same questions: what the compute buys, and its
    price; ΔEX against ``baseline`` with its paired bootstrap 95 % interval. "model s" is the
    seconds the model was busy per question, calls served from a response cache counted at
    their recorded time: what the configuration costs alone when another run shared its calls."""
    table = Table(title="Side by side")
    columns = (
        "configuration",
        "questions",
        "EX (BIRD)",
        f"ΔEX vs {baseline} [95% CI]",
        "EX (Spider)",
        "s/question",
        "p95 s",
        "model s",
        "calls/question",
        "$/question",
        "$/correct",
        "answered by the first wave",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "configuration" else "right")
    for r in results:
        first = r.breakdown.step_shares.get("first_wave")
        spent, latency = r.costs.per_question, r.latency
        busy = spent.busy_s if spent else None
        table.add_row(
            r.label,
            f"{r.accuracy.scored:.0f}",
            _fmt(r.overall.ex_bird),
            "baseline" if r.label == baseline else str(intervals.get(r.label, "–")),
            _fmt(r.overall.ex_spider),
            f"{latency.mean_s if latency else 0:.1f}",
            f"{latency.p95_s if latency else 0:.1f}",
            "–" if busy is None else f"{busy:.1f}",
            f"{spent.calls if spent else 0:.1f}",
            shown[r.label].costs.per_question,
            shown[r.label].costs.per_correct,
            "–" if first is None else f"{first:.0%}",
        )
    return table


def _right(result: RunResult) -> dict[str, tuple[int, int]]:
    """difficulty -> (questions right, questions) under BIRD semantics."""
    return {
        row.group: (round((row.ex_bird or 0) * row.questions), row.questions)
        for row in result.accuracy.by_difficulty
    }


def verdict(baseline: RunResult, other: RunResult, ci: DiffCI | None) -> str:
    """One line: ``other`` against ``baseline``, overall and per difficulty, whether it matches
    or beats it on every difficulty, and ``ci``, their paired EX difference."""
    mine, theirs = _right(other), _right(baseline)
    parts = [
        f"{d} {mine[d][0]}/{mine[d][1]} vs {theirs[d][0]}/{theirs[d][1]}"
        for d in mine
        if d in theirs
    ]
    every = all(mine[d][0] >= theirs[d][0] for d in mine if d in theirs)
    return (
        f"{other.label} against {baseline.label}: {'; '.join(parts)} — "
        + ("at least as many right at every difficulty" if every else "[bold red]fewer right on ")
        + (
            ""
            if every
            else ", ".join(d for d in mine if d in theirs and mine[d][0] < theirs[d][0]) + "[/]"
        )
        + (f"; ΔEX {ci} (paired bootstrap, 95%)" if ci is not None else "")
    )


def print_run(outcome: RunOutcome, shown: _Shown, console: Console) -> None:
    """One configuration's pace line, then its run and pool rates, retrieval, choices, cost and
    judge lines, and where its run directory, report and MLflow run are."""
    r = outcome.result
    spent, latency, pass_at_k = r.costs.per_question, r.latency, r.accuracy.pass_at_k
    largest_k = max(pass_at_k, default=0)
    console.print(
        f"[bold]{r.label}[/]: {latency.mean_s if latency else 0:.2f} s/question "
        f"(p50 {latency.p50_s if latency else 0:.2f}), "
        f"{spent.tokens if spent else 0:.0f} tokens/question, "
        f"{spent.calls if spent else 0:.1f} calls/question, "
        f"degraded {r.degraded_rate or 0:.1%}"
        + (f" ({r.reduced_prompts} with a reduced prompt)" if r.reduced_prompts else "")
        + (f", pass@{largest_k} {pass_at_k[largest_k]:.3f}" if largest_k else "")
        + (
            f", {r.questions_per_minute:.1f} questions/min in this invocation"
            if r.questions_per_minute is not None
            else ""
        )
    )
    for line in shown.rates:
        console.print(f"  {line}", highlight=False)
    for line in shown.retrieval:
        shown_line = f"[bold red]{line}[/]" if line == NO_RETRIEVAL else escape(line)
        console.print(f"  {shown_line}", highlight=False)
    for line in chosen_lines(r.chosen):
        console.print(f"  {escape(line)}", highlight=False)
    for line in shown.costs.lines:
        console.print(f"  cost: {escape(line)}", highlight=False)
    for line in shown.judge:
        console.print(f"  judge: {escape(line)}", highlight=False)
    console.print(f"  run dir {outcome.run_dir}\n  report  {outcome.report}")
    tracked = outcome.tracked
    console.print(
        f"  MLflow  {tracked.tracking_uri}  run {tracked.run_id}  artifacts {tracked.artifact_uri}"
    )


def chosen_lines(chosen: dict[str, str], shown: int = 4) -> list[str]:
    """What the pipeline chose per database (pipelines/database_rules.py), databases with the same
    settings on one line.

    >>> chosen_lines({"a": "select=vote", "b": "select=likelihood", "c": "select=vote"})
    ['chosen for a, c: select=vote', 'chosen for b: select=likelihood']
    """
    groups: dict[str, list[str]] = {}
    for db, settings in chosen.items():
        groups.setdefault(settings, []).append(db)
    lines = []
    for settings, dbs in groups.items():
        named = ", ".join(dbs[:shown]) + (
            f" and {len(dbs) - shown} more" if len(dbs) > shown else ""
        )
        lines.append(f"chosen for {named}: {settings}")
    return lines
