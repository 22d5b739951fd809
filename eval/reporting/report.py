"""A run's Markdown report and plots, rendered from its :class:`RunResult`.

    RunResult ──► write_run_report ──► report.md + ex_by_difficulty.png, pass_at_k.png,
                                       cost_vs_accuracy.png

EX is broken down by the benchmark's difficulty label (Spider hardness, BIRD's difficulty), by
SDS bucket where the benchmark rates its questions on SDS (eval/sds.py), and by construct where
its questions name the one they exercise (the enterprise floor); beside it, the run rate and the
pool rates. The report ends with every figure under its MLflow name.

    write_run_report(run_result(frame, label="adaptive"), run_dir / "report")
    ──►  [report.md, ex_by_difficulty.png, pass_at_k.png, cost_vs_accuracy.png]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from core.types import Frozen
from eval.grading.judge import judge_lines
from eval.reporting.accuracy import CostPoint, ExRow, rate_lines
from eval.reporting.breakdown import FamilyRow, LossRow, StepCostRow
from eval.reporting.costs import cost_lines
from eval.reporting.plots import plot_cost_vs_accuracy, plot_ex_by_difficulty, plot_pass_at_k
from eval.reporting.result import RunResult
from eval.reporting.retrieval import NO_RETRIEVAL, retrieval_lines


def write_run_report(result: RunResult, out_dir: Path) -> list[Path]:
    """``report.md`` and its three plots for one run; returns the files written. A run whose
    pipeline retrieves but where no question used retrieval says so in bold."""
    out_dir.mkdir(parents=True, exist_ok=True)
    title = result.label
    plots = [
        plot_ex_by_difficulty(
            result.accuracy.by_difficulty,
            out_dir / "ex_by_difficulty.png",
            f"{title}: EX by difficulty",
        ),
        plot_pass_at_k(
            {
                "ex_bird": result.accuracy.pass_at_k,
                "ex_spider": result.accuracy.pass_at_k_spider,
                "ex_columns": result.accuracy.pass_at_k_columns,
            },
            out_dir / "pass_at_k.png",
            f"{title}: pass@k",
        ),
        plot_cost_vs_accuracy(
            rows_frame(result.accuracy.cost_points, CostPoint),
            out_dir / "cost_vs_accuracy.png",
            f"{title}: cost vs accuracy",
        ),
    ]
    metrics = result.metrics()
    lines = [
        f"# {title}",
        "",
        "## Execution accuracy",
        "",
        markdown_table(_ex_frame(result.accuracy.by_difficulty, "difficulty")),
        "",
        *(f"- {line}" for line in rate_lines(result.accuracy)),
        "",
        *_ex_section("SDS bucket (analytical depth, 0-35)", result.accuracy.by_sds, "sds_bucket"),
        *_ex_section("construct (floor questions)", result.accuracy.by_construct, "construct"),
        "## Retrieval",
        "",
        *(
            f"**{line}**" if line == NO_RETRIEVAL else f"- {line}"
            for line in retrieval_lines(result.retrieval)
        ),
        "",
        "## Cost",
        "",
        *(f"- {line}" for line in cost_lines(result.costs, result.accuracy.scored)),
        "",
        *_judge_section(result.judge),
        *_breakdown_lines(result),
        "## Metrics",
        "",
        "| metric | value |",
        "|---|---|",
        *(f"| {name} | {_fmt(value)} |" for name, value in sorted(metrics.items())),
        "",
        *(f"![{p.stem}]({p.name})" for p in plots),
        "",
    ]
    report = out_dir / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    return [report, *plots]


def rows_frame(rows: Sequence[Frozen], model: type[Frozen]) -> pl.DataFrame:
    """``rows`` as a table with one column per field of ``model`` (its columns even when empty)."""
    if not rows:
        return pl.DataFrame(schema=list(model.model_fields))
    return pl.DataFrame([row.model_dump() for row in rows])


def _ex_frame(rows: Sequence[ExRow], group: str) -> pl.DataFrame:
    return rows_frame(rows, ExRow).rename({"group": group})


def _judge_section(judge: dict[str, float]) -> list[str]:
    lines = judge_lines(judge)
    if not lines:
        return []
    return ["## Answer correctness (LLM judge)", "", *(f"- {line}" for line in lines), ""]


def _ex_section(title: str, rows: Sequence[ExRow], group: str) -> list[str]:
    """An EX table by ``group``; nothing where the benchmark has no such groups (SDS buckets for
    a benchmark that rates its questions' depth, constructs for floor questions)."""
    if not rows:
        return []
    return [f"## Execution accuracy by {title}", "", markdown_table(_ex_frame(rows, group)), ""]


def _breakdown_lines(result: RunResult) -> list[str]:
    """Where the answers come from (pipeline step, candidate family) and where right ones were lost."""
    parts = result.breakdown
    sections = [
        (
            "Answered at each step",
            pl.DataFrame(
                {"step": list(parts.step_shares), "share": list(parts.step_shares.values())}
            ),
        ),
        ("Cost of each step (questions that ran it)", rows_frame(parts.step_costs, StepCostRow)),
        (
            "Share of each candidate family's samples that are right",
            rows_frame(parts.families, FamilyRow),
        ),
        (
            "Wrong answers by where the right one was lost (BIRD semantics)",
            rows_frame(parts.losses, LossRow),
        ),
    ]
    lines: list[str] = []
    for heading, table in sections:
        if not table.is_empty():
            lines += [f"## {heading}", "", markdown_table(table), ""]
    return lines


def markdown_table(frame: pl.DataFrame) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join([header, rule, *rows])


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return (
            "–" if math.isnan(value) else f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"
        )
    return "–" if value is None else str(value)
