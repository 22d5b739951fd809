"""``scale-analytics score PREDICTIONS [key=value ...]``: score a predictions file against a
benchmark's gold SQL.

    scale-analytics score preds.txt benchmark=spider_dev --format spider
    scale-analytics score preds.jsonl benchmark=bird_minidev benchmark.data_dir=/data/bird \\
        [--format jsonl|spider|bird] [--out report.json] [--workers N] [--partial] [--ves [N]]

The benchmark is the composed config's, set by Hydra overrides as in ``eval`` (``benchmark=…``,
any ``benchmark.*`` key: ``benchmark.split``, ``benchmark.data_dir``), before or after the
predictions file: the first argument that is not ``key=value`` (``core.cli.parse_positional``).
The flags are what no config holds: how to read the file, how to score it, where the report goes.

Prints EX under BIRD (set) and Spider (bag, order if ORDER BY) semantics, overall, per
difficulty, per SDS bucket for a benchmark that rates its questions on SDS (eval/sds.py), and per
construct for questions that name the one construct they exercise (the enterprise floor), plus
skipped questions and failing gold queries; ``--out`` gets the full report with one verdict per
question. A predictions file must answer every question (a Spider file has one line per
question; a database id it names must be the question's): a short, empty or shifted file is
refused, and ``--partial`` scores only the questions it answers, saying so.
``--out`` is checked before scoring. Exit code 0 on success, 2 on bad input (one line on
stderr), 1 when the report could not be written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from core.cli import add_positional, parse_positional
from core.cli_errors import fail, user_errors
from core.config import load_config, section
from eval.errors import EvalError, PredictionsFormatError
from eval.grading.prediction_files import check_complete, read_predictions
from eval.grading.scoring import BIRD_TIMEOUT_S, ScoreReport, score_predictions
from eval.loaders import BenchmarkSpec, load_benchmark
from eval.metrics import DEFAULT_ITERATIONS

PROG = "scale-analytics score"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Score predictions by execution.")
    add_positional(
        parser,
        "PREDICTIONS",
        "the predictions file and Hydra overrides (benchmark=spider_dev, benchmark.split=dev)",
    )
    parser.add_argument("--format", choices=("jsonl", "spider", "bird"), default="jsonl")
    parser.add_argument("--out", type=Path, help="write the full report (JSON) here")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="score only the questions the file answers (default: refuse a file that misses some)",
    )
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


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """``(args, hydra overrides)`` with ``args.predictions`` set. Any argument past the
    predictions file goes to Hydra, which refuses it as it would in ``eval``."""
    args, path, overrides = parse_positional(_parser(), argv, "the predictions file is missing")
    args.predictions = Path(path)
    return args, overrides


def main(argv: list[str]) -> int:
    args, overrides = parse_args(argv)
    console = Console(
        width=None if sys.stdout.isatty() else 200
    )  # logs and pipes: no 80-column wrap
    try:
        if args.out:
            _check_writable(args.out)
        benchmark = load_benchmark(section(load_config(overrides), "benchmark", BenchmarkSpec))
        predictions = read_predictions(args.predictions, args.format, benchmark)
        if not predictions:
            raise PredictionsFormatError(f"{args.predictions}: no predictions in the file")
        if not args.partial:
            check_complete(args.predictions, args.format, predictions, benchmark)
        report = score_predictions(
            benchmark,
            predictions,
            workers=args.workers,
            sandbox_timeout_s=args.timeout,
            ves_iterations=args.ves,
            partial=args.partial,
        )
    except (EvalError, ValueError, *user_errors()) as exc:
        return fail(PROG, exc)
    _print(console, report)
    if args.out:
        try:
            _write_report(args.out, report)
        except OSError as exc:
            print(f"{PROG}: could not write --out {args.out}: {exc}", file=sys.stderr)
            return 1
        console.print(f"report: {args.out}")
    return 0


def _check_writable(out: Path) -> None:
    """Fail before scoring (minutes on a full benchmark), not after it: open ``out`` for writing."""
    try:
        if out.is_dir():
            raise IsADirectoryError(21, "is a directory")
        out.parent.mkdir(parents=True, exist_ok=True)
        existed = out.exists()
        with out.open("a", encoding="utf-8"):
            pass
        if not existed:
            out.unlink()
    except OSError as exc:
        raise OSError(f"cannot write --out {out}: {exc.strerror or exc}") from None


def _write_report(out: Path, report: ScoreReport) -> None:
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, out)


def _print(console: Console, report: ScoreReport) -> None:
    with_ves = report.overall.r_ves is not None
    table = Table(title=f"{report.benchmark} ({report.split}) — execution accuracy")
    for column in ("questions", "count", "EX (BIRD, set)", "EX (Spider, bag)"):
        table.add_column(column, justify="left" if column == "questions" else "right")
    if with_ves:
        table.add_column("R-VES", justify="right")
    sections = (report.by_difficulty, report.by_sds, report.by_construct)
    ends = [groups[-1] for groups in sections if groups]
    for group in (*(g for groups in sections for g in groups), report.overall):
        row = [
            group.group,
            str(group.count),
            f"{100 * group.ex_bird:.1f}",
            f"{100 * group.ex_spider:.1f}",
        ]
        if with_ves:
            row.append(f"{group.r_ves:.1f}")
        table.add_row(*row, end_section=any(group is end for end in ends))
    console.print(table)
    if report.partial:
        console.print(
            f"PARTIAL: --partial scored the {len(report.verdicts)} questions the file answers; "
            f"{report.left_out} without a prediction are in no EX above",
            style="bold yellow",
            highlight=False,
        )
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
