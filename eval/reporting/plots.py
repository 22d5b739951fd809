"""The report's plots: EX by difficulty, pass@k curves, and cost against accuracy.

plot_ex_by_difficulty(result.by_difficulty, dir / "ex_by_difficulty.png", "adaptive: EX by difficulty")
plot_pass_at_k({"ex_bird": result.pass_at_k}, dir / "pass_at_k.png", "adaptive: pass@k")
plot_cost_vs_accuracy(points, dir / "cost_vs_accuracy.png", "ablation: cost vs accuracy")
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # reports are files; never open a window

import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from eval.reporting.result import ExRow  # noqa: E402


def _title(ax: plt.Axes, text: str) -> None:
    """Run labels can be long override lists: wrap them instead of running off the figure."""
    ax.set_title("\n".join(textwrap.wrap(text, 60)), fontsize=9)


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_ex_by_difficulty(rows: Sequence[ExRow], path: Path, title: str) -> Path:
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    width = 0.38
    for offset, semantics in ((-width / 2, "ex_bird"), (width / 2, "ex_spider")):
        values = [getattr(row, semantics) or 0.0 for row in rows]
        bars = ax.bar([i + offset for i in range(len(rows))], values, width, label=semantics)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(range(len(rows)), [f"{row.group}\n(n={row.questions})" for row in rows])
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("execution accuracy")
    _title(ax, title)
    ax.legend(loc="upper right", fontsize=8)
    return _save(fig, path)


def plot_pass_at_k(curves: dict[str, dict[int, float]], path: Path, title: str) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    plotted = [label for label, curve in curves.items() if curve]
    for label in plotted:
        ax.plot(list(curves[label]), list(curves[label].values()), marker="o", label=label)
    ax.set_xlabel("k (samples drawn from the candidate pool)")
    ax.set_ylabel("pass@k")
    ax.set_ylim(0, 1.05)
    _title(ax, title if plotted else f"{title} (no candidate pools)")
    if plotted:
        ax.legend(fontsize=8)
    return _save(fig, path)


def plot_cost_vs_accuracy(points: pl.DataFrame, path: Path, title: str) -> Path:
    """``points`` has ``label``, ``tokens_per_question``, ``ex_bird`` (and ``cost_usd_per_question``)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    use_cost = (
        "cost_usd_per_question" in points.columns
        and (points.get_column("cost_usd_per_question").fill_null(0) > 0).any()
    )
    x_name = "cost_usd_per_question" if use_cost else "tokens_per_question"
    shown = [
        r
        for r in points.iter_rows(named=True)
        if r[x_name] is not None and r["ex_bird"] is not None
    ]
    # alternate label offsets: configurations with equal accuracy and similar cost sit together
    for i, row in enumerate(sorted(shown, key=lambda r: r[x_name])):
        ax.scatter(row[x_name], row["ex_bird"])
        ax.annotate(
            row["label"],
            (row[x_name], row["ex_bird"]),
            fontsize=8,
            xytext=(4, 6 if i % 2 == 0 else -12),
            textcoords="offset points",
        )
    values = [r[x_name] for r in shown if r[x_name] > 0]
    if values and max(values) > 10 * min(values):  # single-pass to full pipeline spans decades
        ax.set_xscale("log")
    ax.set_xlabel("USD per question" if use_cost else "tokens per question")
    ax.set_ylabel("EX (BIRD semantics)")
    _title(ax, title)
    ax.grid(alpha=0.3)
    return _save(fig, path)
