"""``scale-analytics score``: score a predictions file against a benchmark's gold SQL.

    scale-analytics score --benchmark spider --data ../shared/benchmarks/spider \\
        --predictions preds.jsonl [--format jsonl|spider|bird] [--out report.json] [--workers N]

Prints EX under BIRD (set) and Spider (bag, order if ORDER BY) semantics, overall and per
difficulty, plus skipped questions and failing gold queries; ``--out`` gets the full report
with one verdict per question. Exit code 0 on success, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from eval.errors import EvalError
from eval.loaders import BenchmarkSpec, load_benchmark
from eval.metrics import DEFAULT_ITERATIONS
from eval.prediction_files import read_predictions
from eval.scoring import BIRD_TIMEOUT_S, ScoreReport, score_predictions

# --benchmark choice -> the conf/benchmark config it starts from
BENCHMARK_CONFIGS = {"spider": "spider_dev", "bird": "bird_minidev", "demo": "demo"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scale-analytics score", description="Score a predictions file by execution."
    )
    parser.add_argument("--benchmark", required=True, choices=sorted(BENCHMARK_CONFIGS))
    parser.add_argument("--data", type=Path, help="benchmark folder (default: from config)")
    parser.add_argument("--predictions", type=Path, required=True)
    parser.add_argument("--format", choices=("jsonl", "spider", "bird"), default="jsonl")
    parser.add_argument("--out", type=Path, help="write the full report (JSON) here")
    parser.add_argument("--split", help="question split, e.g. dev / train / mini_dev")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=BIRD_TIMEOUT_S, help="seconds per query")
    parser.add_argument(
        "--ves",
        type=int,
        nargs="?",
        const=DEFAULT_ITERATIONS,
        default=0,
        metavar="ITERATIONS",
        help="also compute R-VES, timing each correct pair ITERATIONS times "
        f"(default {DEFAULT_ITERATIONS})",
    )
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 200)  # logs and pipes: no 80-column wrap
    try:
        benchmark = load_benchmark(_spec(args))
        predictions = read_predictions(args.predictions, args.format, benchmark)
        report = score_predictions(
            benchmark,
            predictions,
            workers=args.workers,
            sandbox_timeout_s=args.timeout,
            ves_iterations=args.ves,
        )
    except (EvalError, ValueError) as exc:
        print(f"scale-analytics score: {exc}", file=sys.stderr)
        return 2
    _print(console, report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report.model_dump_json(indent=2), encoding="utf-8")
        console.print(f"report: {args.out}")
    return 0


def _spec(args: argparse.Namespace) -> BenchmarkSpec:
    from pipelines.config import load_config  # Hydra only to resolve the default data folder

    overrides = [f"benchmark={BENCHMARK_CONFIGS[args.benchmark]}"]
    if args.split:
        overrides.append(f"benchmark.split={args.split}")
    fields = dict(load_config(overrides).benchmark)
    if args.data is not None:
        fields["data_dir"] = str(args.data)
    return BenchmarkSpec.model_validate(fields)


def _print(console: Console, report: ScoreReport) -> None:
    with_ves = report.overall.r_ves is not None
    table = Table(title=f"{report.benchmark} ({report.split}) — execution accuracy")
    for column in ("questions", "count", "EX (BIRD, set)", "EX (Spider, bag)"):
        table.add_column(column, justify="left" if column == "questions" else "right")
    if with_ves:
        table.add_column("R-VES", justify="right")
    for group in (*report.by_difficulty, report.overall):
        row = [
            group.group,
            str(group.count),
            f"{100 * group.ex_bird:.1f}",
            f"{100 * group.ex_spider:.1f}",
        ]
        if with_ves:
            row.append(f"{group.r_ves:.1f}")
        table.add_row(
            *row, end_section=group is report.by_difficulty[-1] if report.by_difficulty else False
        )
    console.print(table)
    errors = sum(
        v.error is not None and v.sql is not None and v.gold_error is None for v in report.verdicts
    )
    console.print(
        f"scored {report.scored} · prediction errors {errors} · missing predictions "
        f"{report.missing_predictions} · ignored predictions {report.ignored_predictions} · "
        f"skipped (no database) {len(report.skipped)} · "
        f"gold failures {len(report.gold_failures)} · "
        f"{report.wall_s:.1f} s on {report.workers} worker(s)"
    )
    for verdict in report.gold_failures[:10]:
        console.print(f"  gold failed: {verdict.task_id}: {verdict.gold_error}", style="yellow")
    reasons = sorted({s.reason for s in report.skipped})
    for reason in reasons[:5]:
        count = sum(s.reason == reason for s in report.skipped)
        console.print(f"  skipped {count}: {reason}", style="dim")
