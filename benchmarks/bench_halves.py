"""A run's figures per half of a split benchmark, read from its stored predictions. No model runs.

    python benchmarks/bench_halves.py RUN_DIR [RUN_DIR ...] [--stride 2] [--reference gpt-4.1-mini]
    python benchmarks/bench_halves.py RUN_DIR --table   # docs/results.md's columns, one row a half
    python benchmarks/bench_halves.py RUN_DIR+RUN_DIR   # one configuration's answers in two directories

The tuning and held-out halves of the claims and enterprise benchmarks are every other question
(``benchmark.stride=2``, ``offset`` 0 or 1); one configuration's halves grow one run directory.
A prediction's task id keeps the question's index in the benchmark (``<prefix>:<index>``), so the
half is ``index % stride``. Per run and half: questions, EX (BIRD semantics) with the correct
count, the run rate and the pool rates, EX by difficulty, by SDS bucket where the benchmark rates
them and by construct (BIRD and column matching) where questions name one, mean / p50 / p95
seconds, calls and tokens per question, cost per question and per correct answer at the run's
configured prices and with its tokens at a hosted reference price (``conf/prices``), and the
judge's verdicts with their agreement with EX where the judge ran — the same functions as the
run's own summary (``eval/reporting/result.py``, ``eval/grading/judge.py``). Directories joined by
``+`` are one configuration whose questions were answered in several
(``eval.sweep.store.read_answers``: a question's answer in a later directory replaces the earlier
one's).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl
from omegaconf import OmegaConf

from core.config import load_config
from eval.reporting.accuracy import ExRow, rate_lines
from eval.reporting.result import run_result
from eval.sweep.store import read_answers
from models.budget import Price, PriceList


def halves(frame: pl.DataFrame, stride: int) -> dict[str, pl.DataFrame]:
    index = pl.col("task_id").str.extract(r":(\d+)$").cast(pl.Int64)
    frame = frame.with_columns((index % stride).alias("_half"))
    names = {0: "tuning", 1: "held-out"}
    return {
        names.get(h, f"offset {h}"): frame.filter(pl.col("_half") == h).drop("_half")
        for h in sorted(frame["_half"].unique().to_list())
    }


def describe(name: str, frame: pl.DataFrame, reference: tuple[str, Price] | None) -> list[str]:
    result = run_result(frame, label=name, reference=reference)
    m = result.metrics()
    right = int(frame["ex_bird"].fill_null(False).sum())
    lines = [
        f"  {name}: {frame.height} questions, EX {m.get('ex_bird', 0):.3f} ({right}/{frame.height})",
        *(f"    {line}" for line in rate_lines(result.accuracy)),
    ]
    parts = []
    for difficulty, group in frame.group_by("difficulty", maintain_order=True):
        parts.append(
            f"{difficulty[0]} {int(group['ex_bird'].fill_null(False).sum())}/{group.height}"
        )
    lines.append("    by difficulty: " + ", ".join(parts))
    groups = (
        ("by SDS", result.accuracy.by_sds, lambda r: f"{_right(r, r.ex_bird)}/{r.questions}"),
        (
            "by construct, right under BIRD / columns",
            result.accuracy.by_construct,
            lambda r: f"{_right(r, r.ex_bird)} / {_right(r, r.ex_columns)} of {r.questions}",
        ),
    )
    for label, rows, counts in groups:
        if rows:
            lines.append(f"    {label}: " + ", ".join(f"{r.group} {counts(r)}" for r in rows))
    lines.append(
        f"    s/question {m['latency_mean_s']:.1f} (p50 {m['latency_p50_s']:.1f}, p95 "
        f"{m['latency_p95_s']:.1f}); {m['calls_per_question']:.2f} calls, "
        f"{m['prompt_tokens_per_question']:,.0f} + {m['completion_tokens_per_question']:,.0f} "
        "tokens per question"
    )
    cost = f"    cost ${m['cost_usd_per_question']:.6f}/question"
    cost += (
        f", ${m['cost_usd_per_correct']:.5f}/correct"
        if "cost_usd_per_correct" in m
        else ", n/a per correct (none correct)"
    )
    if result.costs.reference is not None:
        cost += f"; at {result.costs.reference.name}: ${result.costs.reference.per_question:.5f}/question"
        if result.costs.reference.per_correct is not None:
            cost += f", ${result.costs.reference.per_correct:.5f}/correct"
    lines.append(cost)
    if "judge_correct" in m:
        agreement = m.get("judge_agreement_ex")
        kappa = m.get("judge_kappa_ex")
        lines.append(
            f"    judge: correct {m['judge_correct']:.3f}, mean score "
            f"{m.get('judge_score_mean', float('nan')):.1f}/50"
            + (f", agrees with EX on {agreement:.0%}" if agreement is not None else "")
            + (f", kappa {kappa:.2f}" if kappa is not None else "")
        )
    return lines


def _right(row: ExRow, ex: float | None) -> str:
    """Questions of ``row`` right at ``ex``; "–" when the semantics was not graded."""
    return "–" if ex is None else str(round(ex * row.questions))


def table_row(name: str, frame: pl.DataFrame, reference: tuple[str, Price] | None) -> str:
    """``| half | EX (right/n) | s/question mean (p95) | calls | $/correct |``: docs/results.md."""
    result = run_result(frame, label=name, reference=reference)
    m = result.metrics()
    right = int(frame["ex_bird"].fill_null(False).sum())
    per_correct = (
        f"${m['cost_usd_per_correct']:.4f}" if "cost_usd_per_correct" in m else "n/a (none right)"
    )
    if result.costs.reference is not None and result.costs.reference.per_correct is not None:
        per_correct += f" / ${result.costs.reference.per_correct:.4f}"
    return (
        f"| {name} | {m.get('ex_bird', 0):.3f} ({right}/{frame.height}) | "
        f"{m['latency_mean_s']:.1f} ({m['latency_p95_s']:.1f}) | {m['calls_per_question']:.2f} | "
        f"{per_correct} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "runs", nargs="+", help="RUN_DIR, or RUN_DIR+RUN_DIR... for one configuration"
    )
    parser.add_argument("--stride", type=int, default=2)
    parser.add_argument("--reference", default=None, help="a hosted price list entry (conf/prices)")
    parser.add_argument("--table", action="store_true", help="one Markdown table row a half")
    args = parser.parse_args()
    prices = PriceList.model_validate(OmegaConf.to_container(load_config([]).prices))
    name = args.reference or prices.reference
    reference = (name, prices.hosted[name]) if name else None
    for run in args.runs:
        frame = read_answers(run)
        print("+".join(Path(d).name for d in run.split("+")))
        for half, part in halves(frame, args.stride).items():
            if args.table:
                print(table_row(half, part, reference))
            else:
                print("\n".join(describe(half, part, reference)))


if __name__ == "__main__":
    main()
