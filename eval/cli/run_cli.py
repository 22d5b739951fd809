"""``scale-analytics eval [--multirun] [key=value ...]``: run configured pipelines over a benchmark.

    scale-analytics eval scaling=single_pass benchmark=spider_dev_sub9 model=qwen2.5-coder-1.5b
    scale-analytics eval experiment=ablation benchmark.limit=12          # one run per variant
    scale-analytics eval --multirun model=qwen2.5-coder-0.5b,qwen2.5-coder-1.5b scaling=single_pass

Each configuration becomes a resumable run directory and one MLflow run; rerunning the same
command continues where it stopped. Ends with the EX table and where everything was written.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence

from hydra.errors import HydraException
from omegaconf import OmegaConf
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core import stop
from core.cli_errors import fail, user_errors
from core.config import load_config
from eval.errors import EvalError
from eval.experiments import Configuration, expand, report_overrides
from eval.grading.judge import judge_lines
from eval.loaders import LoadedBenchmark, load_benchmark
from eval.metrics.bootstrap import paired_difference
from eval.reporting.compare import paired_intervals
from eval.reporting.costs import cost_lines, per_correct, usd
from eval.reporting.report import NO_RETRIEVAL, retrieval_lines
from eval.run import RunOutcome, run_configuration
from eval.sweep.config import SweepSettings
from eval.sweep.errors import SweepInterrupted
from eval.sweep.progress import duration
from eval.sweep.services import shared_model_servers
from eval.sweep.session import ray_session
from models.errors import ModelError


def run_all(configurations: Sequence[Configuration], console: Console) -> list[RunOutcome]:
    """Run every configuration in one Ray session, loading each benchmark and model once.

    Under a time budget (``sweep.budget_s``) the first configuration answers as many questions
    as fit, and the others answer the same ones, so that they compare on equal questions.
    """
    cfgs = [load_config(c.overrides) for c in configurations]
    benchmarks: dict[str, LoadedBenchmark] = {}
    outcomes: list[RunOutcome] = []
    sweep = SweepSettings.from_cfg(cfgs[0])
    if sweep.budget_s is not None:
        console.print(
            f"answering within {duration(sweep.budget_s)} (sweep.budget_s={sweep.budget_s:g}): "
            f"at least {sweep.min_questions} questions, then as many as this machine's pace "
            "fits",
            highlight=False,
        )
    with ray_session(sweep.ray), shared_model_servers(cfgs):
        for configuration, cfg in zip(configurations, cfgs):
            key = repr(sorted(cfg.benchmark.items()))
            if key not in benchmarks:
                benchmarks[key] = load_benchmark(cfg.benchmark)
            benchmark = benchmarks[key]
            if outcomes and outcomes[0].sweep.left:
                chosen = set(outcomes[0].task_ids)
                benchmark = benchmark.model_copy(
                    update={"tasks": tuple(t for t in benchmark.tasks if t.task_id in chosen)}
                )
            console.print(
                f"[bold]{configuration.label}[/]: {len(benchmark.tasks)} questions of {benchmark.name}"
                + (
                    f" ({len(benchmark.skipped)} skipped: database missing)"
                    if benchmark.skipped
                    else ""
                )
            )
            outcomes.append(run_configuration(cfg, configuration.label, benchmark))
            if len(outcomes) == 1 and outcomes[0].sweep.left:
                console.print(budget_line(outcomes[0], sweep), highlight=False)
    return outcomes


def budget_line(outcome: RunOutcome, sweep: SweepSettings) -> str:
    """What the budget chose and why, and how to get the rest."""
    result = outcome.sweep
    answered = result.resumed + result.answered
    return (
        f"this machine answers a question in ~{result.pace_s or 0:.0f} s: {answered} of "
        f"{result.total} questions fit sweep.budget_s={sweep.budget_s:g}; a rerun answers "
        f"more (it resumes), sweep.budget_s=null all {result.total}"
    )


def summary_table(outcomes: Sequence[RunOutcome]) -> Table:
    table = Table(title="Execution accuracy")
    for column in ("configuration", "difficulty", "questions", "EX (BIRD)", "EX (Spider)"):
        table.add_column(
            column, justify="left" if column in ("configuration", "difficulty") else "right"
        )
    for outcome in outcomes:
        # difficulty rows, then SDS buckets where the benchmark rates them, then "all"
        rows = [
            *outcome.ex_table[:-1],
            *({**r, "difficulty": f"SDS {r['sds_bucket']}"} for r in outcome.sds_table),
            *outcome.ex_table[-1:],
        ]
        for row in rows:
            table.add_row(
                outcome.label if row["difficulty"] == "all" else "",
                row["difficulty"],
                str(row["questions"]),
                _fmt(row["ex_bird"]),
                _fmt(row["ex_spider"]),
                end_section=row["difficulty"] == "all",
            )
    return table


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def retrieval_summary(outcome: RunOutcome) -> list[str]:
    """The report's retrieval lines (status, share of questions each source served; loud when none)."""
    lines = retrieval_lines(
        outcome.metrics, outcome.retrieval or "retrieval: unknown", outcome.retrieval_expected
    )
    return [f"[bold red]{line}[/]" if line == NO_RETRIEVAL else escape(line) for line in lines]


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


def comparison_table(outcomes: Sequence[RunOutcome], baseline: str) -> Table:
    """The configurations side by side on the same questions: what the compute buys, and its
    price; ΔEX against ``baseline`` with its paired bootstrap 95 % interval. "model s" is the
    seconds the model was busy per question, calls served from a response cache counted at
    their recorded time: what the configuration costs alone when another run shared its calls."""
    table = Table(title="Side by side")
    intervals = paired_intervals({o.label: o.verdicts for o in outcomes}, baseline)
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
    for o in outcomes:
        m = o.metrics
        first = m.get("answered_by/first_wave")
        table.add_row(
            o.label,
            f"{m.get('questions_scored', 0):.0f}",
            _fmt(m.get("ex_bird")),
            "baseline" if o.label == baseline else str(intervals.get(o.label, "–")),
            _fmt(m.get("ex_spider")),
            f"{m.get('latency_mean_s', 0):.1f}",
            f"{m.get('latency_p95_s', 0):.1f}",
            "–" if "busy_s_per_question" not in m else f"{m['busy_s_per_question']:.1f}",
            f"{m.get('calls_per_question', 0):.1f}",
            usd(m.get("cost_usd_per_question")),
            per_correct(m),
            "–" if first is None else f"{first:.0%}",
        )
    return table


def _right(outcome: RunOutcome) -> dict[str, tuple[int, int]]:
    """difficulty -> (questions right, questions) under BIRD semantics."""
    return {
        row["difficulty"]: (round((row["ex_bird"] or 0) * row["questions"]), row["questions"])
        for row in outcome.ex_table
    }


def verdict(baseline: RunOutcome, other: RunOutcome) -> str:
    """One line: ``other`` against ``baseline``, overall and per difficulty, and whether it
    matches or beats it on every difficulty."""
    mine, theirs = _right(other), _right(baseline)
    parts = [
        f"{d} {mine[d][0]}/{mine[d][1]} vs {theirs[d][0]}/{theirs[d][1]}"
        for d in mine
        if d in theirs
    ]
    every = all(mine[d][0] >= theirs[d][0] for d in mine if d in theirs)
    ci = paired_difference(other.verdicts, baseline.verdicts)
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


def print_summary(
    outcomes: Sequence[RunOutcome], console: Console, baseline: str | None = None
) -> None:
    """The tables, then a few lines per configuration; ``baseline`` (the experiment's, when it
    names one of them; else the first) is what the others' ΔEX is measured against. The verdict
    lines say how the named baseline fares against each other configuration (without one: each
    other configuration against the first)."""
    console.print(summary_table(outcomes))
    if len(outcomes) > 1:
        labels = [o.label for o in outcomes]
        console.print(comparison_table(outcomes, baseline if baseline in labels else labels[0]))
        named = next((o for o in outcomes if o.label == baseline), None)
        pairs = (
            [(outcomes[0], other) for other in outcomes[1:]]
            if named is None
            else [(other, named) for other in outcomes if other is not named]
        )
        for reference, measured in pairs:
            console.print(verdict(reference, measured))
    for o in outcomes:
        m = o.metrics
        largest_k = max(
            (int(k[8:]) for k in m if k.startswith("pass_at_") and k[8:].isdigit()), default=0
        )
        console.print(
            f"[bold]{o.label}[/]: {m.get('latency_mean_s', 0):.2f} s/question (p50 {m.get('latency_p50_s', 0):.2f}), "
            f"{m.get('tokens_per_question', 0):.0f} tokens/question, "
            f"{m.get('calls_per_question', 0):.1f} calls/question, "
            f"degraded {m.get('degraded_rate', 0):.1%}"
            + (f", pass@{largest_k} {m[f'pass_at_{largest_k}']:.3f}" if largest_k else "")
            + (
                f", {m['questions_per_minute']:.1f} questions/min in this invocation"
                if "questions_per_minute" in m
                else ""
            )
        )
        for line in retrieval_summary(o):
            console.print(f"  {line}", highlight=False)
        for line in chosen_lines(o.chosen):
            console.print(f"  {escape(line)}", highlight=False)
        for line in cost_lines(m, o.pricing, o.reference):
            console.print(f"  cost: {escape(line)}", highlight=False)
        for line in judge_lines(m):
            console.print(f"  judge: {escape(line)}", highlight=False)
        console.print(f"  run dir {o.run_dir}\n  report  {o.report}")
        console.print(
            f"  MLflow  {o.tracked.tracking_uri}  run {o.tracked.run_id}  artifacts {o.tracked.artifact_uri}"
        )


def main(argv: list[str] | None = None, prog: str = "scale-analytics eval") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    multirun = any(a in ("-m", "--multirun") for a in argv)
    overrides = [a for a in argv if a not in ("-m", "--multirun")]
    console = Console(
        width=None if sys.stdout.isatty() else 200
    )  # logs and pipes: no 80-column wrap
    try:
        configurations = expand(overrides, load_config, multirun=multirun)
        outcomes = run_all(configurations, console)
    except SweepInterrupted as exc:
        stop.say(f"{prog}: {exc}")
        return stop.exit_code()
    except KeyboardInterrupt:
        stop.say(
            f"{prog}: interrupted; finished questions are saved; rerun the same command to resume"
        )
        return stop.exit_code()
    except (
        EvalError,
        HydraException,
        ModelError,
        *user_errors(),
    ) as exc:  # bad input: one line on stderr
        return fail(prog, exc)
    print_summary(
        outcomes,
        console,
        OmegaConf.select(load_config(configurations[0].overrides), "experiment.baseline"),
    )
    if len(outcomes) > 1:
        command = shlex.join(["scale-analytics", "report", *report_overrides(overrides)])
        console.print(f"Ablation table and plot: {escape(command)}", highlight=False)
    return 0
