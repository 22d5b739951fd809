"""Metrics and reports from a run's predictions, and the ablation table across runs.

    predictions.parquet ──► run_metrics ──► {"ex_bird": …, "pass_at_8": …}  (logged to MLflow)
                       └─► write_run_report ──► report.md + ex_by_difficulty.png, pass_at_k.png,
                                                cost_vs_accuracy.png
    MLflow runs of an experiment ──► ablation_table (polars) ──► write_experiment_report

EX is broken down by the benchmark's difficulty label (Spider hardness, BIRD's difficulty) and,
where the benchmark rates its questions on SDS (eval/sds.py), by SDS bucket too.

EX is the share of *scored* questions answered correctly. A question whose gold SQL failed is
counted apart (``gold_errors``); one that could not be graded (the sandbox failed) stays in the
denominator as wrong and is counted in ``grading_errors`` (``sweep.retry=errors`` answers it again).
pass@k uses the unbiased estimator over each question's candidate pool; a question with fewer
than k candidates contributes pass@n (all its samples), one with none contributes 0.

On the predictions of a finished run:

    frame = RunStore.open(run_dir, identity).read()
    run_metrics(frame)["ex_bird"]  ──►  0.648
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # reports are files; never open a window

import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from eval.grading.judge import judge_lines, judge_metrics  # noqa: E402
from eval.metrics import pass_at_k, r_ves  # noqa: E402
from eval.reporting.breakdown import (  # noqa: E402
    breakdown_metrics,
    family_accuracy,
    losses,
    step_costs,
    step_shares,
)
from eval.reporting.costs import cost_lines, reference_costs  # noqa: E402
from eval.sds import SDS_BUCKETS, sds_bucket  # noqa: E402
from models.budget import Price  # noqa: E402

SEMANTICS = ("ex_bird", "ex_spider")
DIFFICULTY_ORDER = ("simple", "moderate", "challenging", "easy", "medium", "hard", "extra")


def _scored(frame: pl.DataFrame) -> pl.DataFrame:
    """The questions EX counts: graded ones, and ungraded ones with gold SQL, as wrong (their
    verdict is unknown, and leaving them out would raise EX by whatever made grading fail)."""
    ungraded = (
        pl.col("ex_bird").is_null()
        & pl.col("grading_error").is_not_null()
        & (pl.col("gold_sql").fill_null("") != "")
        & pl.col("gold_error").is_null()
    )
    return frame.filter(pl.col("ex_bird").is_not_null() | ungraded).with_columns(
        *(pl.when(ungraded).then(False).otherwise(pl.col(s)).alias(s) for s in SEMANTICS)
    )


def question_verdicts(frame: pl.DataFrame, semantics: str = "ex_bird") -> dict[str, bool]:
    """Task id -> verdict of each question EX counts (for paired comparisons of runs)."""
    scored = _scored(frame)
    return dict(zip(scored.get_column("task_id").to_list(), scored.get_column(semantics).to_list()))


def pool_counts(frame: pl.DataFrame, semantics: str = "ex_bird") -> list[tuple[int, int]]:
    """``(n, c)`` per scored question: candidates judged, and how many were correct."""
    field = "correct_bird" if semantics == "ex_bird" else "correct_spider"
    counts = []
    for pool in _scored(frame).get_column("candidates").to_list():
        judged = [c[field] for c in pool or () if c[field] is not None]
        counts.append((len(judged), sum(judged)))
    return counts


def pass_at_k_curve(frame: pl.DataFrame, semantics: str = "ex_bird") -> dict[int, float]:
    """``{k: mean pass@k}`` for k = 1 .. the largest pool (empty when no question has a pool)."""
    counts = pool_counts(frame, semantics)
    largest = max((n for n, _ in counts), default=0)
    return {
        k: sum(pass_at_k(n, c, min(k, n)) if n else 0.0 for n, c in counts) / len(counts)
        for k in range(1, largest + 1)
    }


def ex_by_difficulty(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per difficulty (plus ``all``): questions scored, EX under both semantics."""
    scored = _scored(frame).with_columns(pl.col("difficulty").fill_null("unlabelled"))
    aggregations = [
        pl.len().alias("questions"),
        *(pl.col(s).cast(pl.Float64).mean().alias(s) for s in SEMANTICS),
    ]
    rank = {d: i for i, d in enumerate(DIFFICULTY_ORDER)}
    by_difficulty = (
        scored.group_by("difficulty")
        .agg(aggregations)
        .with_columns(pl.col("difficulty").replace_strict(rank, default=len(rank)).alias("_rank"))
        .sort("_rank", "difficulty")
        .drop("_rank")
    )
    overall = scored.select(pl.lit("all").alias("difficulty"), *aggregations)
    return pl.concat([by_difficulty, overall])


_BUCKET_OF = {total: sds_bucket(total) for total in range(36)}


def ex_by_sds(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per SDS bucket of the scored questions that carry an SDS total: questions, EX
    under both semantics; empty when none does (a benchmark that does not rate its questions)."""
    if "sds" not in frame.columns:
        return pl.DataFrame()
    rated = _scored(frame).filter(pl.col("sds").is_not_null())
    if rated.is_empty():
        return pl.DataFrame()
    rank = {bucket: i for i, bucket in enumerate(SDS_BUCKETS)}
    return (
        rated.with_columns(pl.col("sds").replace_strict(_BUCKET_OF).alias("sds_bucket"))
        .group_by("sds_bucket")
        .agg(
            pl.len().alias("questions"),
            *(pl.col(s).cast(pl.Float64).mean().alias(s) for s in SEMANTICS),
        )
        .sort(pl.col("sds_bucket").replace_strict(rank))
    )


def run_metrics(frame: pl.DataFrame, skipped: int = 0) -> dict[str, float]:
    """Every figure of one run, under MLflow-safe names (``ex_bird/hard``, ``pass_at_4``)."""
    scored = _scored(frame)
    n_scored = scored.height
    metrics: dict[str, float] = {
        "questions": float(frame.height),
        "questions_scored": float(n_scored),
        "skipped": float(skipped),
        "gold_errors": float(frame.get_column("gold_error").is_not_null().sum()),
        "grading_errors": float(frame.get_column("grading_error").is_not_null().sum()),
    }
    if frame.height == 0:
        return metrics
    for row in ex_by_difficulty(frame).iter_rows(named=True):
        suffix = "" if row["difficulty"] == "all" else f"/{row['difficulty']}"
        for semantics in SEMANTICS:
            if row[semantics] is not None:
                metrics[f"{semantics}{suffix}"] = row[semantics]
    for row in ex_by_sds(frame).iter_rows(named=True):
        for semantics in SEMANTICS:
            metrics[f"{semantics}/sds_{row['sds_bucket']}"] = row[semantics]
    for semantics, prefix in (("ex_bird", "pass_at_"), ("ex_spider", "pass_at_spider_")):
        for k, value in pass_at_k_curve(frame, semantics).items():
            metrics[f"{prefix}{k}"] = value
    if n_scored:
        metrics["r_ves"] = r_ves(scored.get_column("ves_reward").fill_null(0.0).to_list())
    metrics.update(
        _spend(frame, correct=int(scored.get_column("ex_bird").sum()) if n_scored else 0)
    )
    latency = frame.get_column("latency_s")
    metrics.update(
        latency_p50_s=float(latency.quantile(0.5, interpolation="linear")),
        latency_p95_s=float(latency.quantile(0.95, interpolation="linear")),
        latency_mean_s=float(latency.mean()),
        degraded_rate=float(frame.get_column("degraded").mean()),
        candidates_per_question=float(frame.get_column("candidates").list.len().mean()),
    )
    for degraded, name in ((True, "ex_bird/degraded"), (False, "ex_bird/not_degraded")):
        part = scored.filter(pl.col("degraded") == degraded)
        if part.height:
            metrics[name] = float(part.get_column("ex_bird").cast(pl.Float64).mean())
    metrics.update(retrieval_shares(frame))
    metrics.update(breakdown_metrics(frame))
    metrics.update(judge_metrics(frame))
    return metrics


RETRIEVAL_SOURCES = ("cells", "examples")
NO_RETRIEVAL = "No question was answered with retrieved cell values or examples: retrieval was off."


def retrieval_shares(frame: pl.DataFrame) -> dict[str, float]:
    """Share of questions answered with each L0 source (``retrieval_cells_share``, ...) and with
    none (``retrieval_none_share``); a record without the column counts as answered without."""
    if frame.height == 0:
        return {}
    if "retrieval" in frame.columns:
        served = frame.get_column("retrieval").fill_null([]).to_list()
    else:
        served = [[]] * frame.height
    shares = {
        f"retrieval_{s}_share": sum(s in r for r in served) / frame.height
        for s in RETRIEVAL_SOURCES
    }
    shares["retrieval_none_share"] = sum(not r for r in served) / frame.height
    return shares


def retrieval_lines(
    metrics: dict[str, float], status: str = "", expected: bool = True
) -> list[str]:
    """The report's retrieval section: the run's status line, the shares, and a loud line when no
    question was answered with retrieval although the pipeline retrieves."""
    lines = [status] if status else []
    if "retrieval_none_share" not in metrics:
        return lines
    lines.append(
        ", ".join(f"{s} {metrics[f'retrieval_{s}_share']:.0%}" for s in RETRIEVAL_SOURCES)
        + f" of questions answered with them; none {metrics['retrieval_none_share']:.0%}"
    )
    if expected and metrics["retrieval_none_share"] == 1.0:
        lines.append(NO_RETRIEVAL)
    return lines


def _spend(frame: pl.DataFrame, correct: int) -> dict[str, float]:
    """Per question and per correct answer (absent when none is right): the totals over ``correct``."""
    totals = frame.select(
        pl.col("calls").sum(),
        pl.col("prompt_tokens").sum(),
        pl.col("completion_tokens").sum(),
        (pl.col("prompt_tokens") + pl.col("completion_tokens")).sum().alias("tokens"),
        pl.col("cost_usd").sum(),
        *([pl.col("busy_s").sum()] if "busy_s" in frame.columns else []),
    ).row(0, named=True)
    spend = {f"{name}_per_question": total / frame.height for name, total in totals.items()}
    if correct:
        spend |= {f"{name}_per_correct": total / correct for name, total in totals.items()}
    return spend


# --- plots and the per-run report -------------------------------------------------------------


def _title(ax: plt.Axes, text: str) -> None:
    """Run labels can be long override lists: wrap them instead of running off the figure."""
    ax.set_title("\n".join(textwrap.wrap(text, 60)), fontsize=9)


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_ex_by_difficulty(table: pl.DataFrame, path: Path, title: str) -> Path:
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    labels = table.get_column("difficulty").to_list()
    width = 0.38
    for offset, semantics in ((-width / 2, "ex_bird"), (width / 2, "ex_spider")):
        values = [v or 0.0 for v in table.get_column(semantics).to_list()]
        bars = ax.bar([i + offset for i in range(len(labels))], values, width, label=semantics)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(
        range(len(labels)), [f"{d}\n(n={n})" for d, n in zip(labels, table.get_column("questions"))]
    )
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


def write_run_report(
    frame: pl.DataFrame,
    out_dir: Path,
    title: str,
    skipped: int = 0,
    retrieval: str = "",
    retrieval_expected: bool = True,
    pricing: str = "",
    reference: tuple[str, Price] | None = None,
) -> list[Path]:
    """``report.md`` and its three plots for one run; returns the files written.

    ``retrieval``: the run's retrieval status line (``pipelines.indexing.builder.ensure``); with
    ``retrieval_expected``, a run where no question used retrieval says so in bold.
    ``pricing`` names the configured prices; ``reference`` is a hosted model's list price the
    run's tokens are also priced at (``eval.reporting.costs``).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    metrics = run_metrics(frame, skipped)
    if reference is not None:
        metrics |= reference_costs(metrics, reference[1])
    table = ex_by_difficulty(frame)
    by_difficulty = (
        _scored(frame)
        .with_columns(pl.col("difficulty").fill_null("unlabelled"))
        .group_by("difficulty")
        .agg(
            (pl.col("prompt_tokens") + pl.col("completion_tokens"))
            .mean()
            .alias("tokens_per_question"),
            pl.col("cost_usd").mean().alias("cost_usd_per_question"),
            pl.col("ex_bird").cast(pl.Float64).mean(),
        )
        .rename({"difficulty": "label"})
    )
    plots = [
        plot_ex_by_difficulty(
            table, out_dir / "ex_by_difficulty.png", f"{title}: EX by difficulty"
        ),
        plot_pass_at_k(
            {s: pass_at_k_curve(frame, s) for s in SEMANTICS},
            out_dir / "pass_at_k.png",
            f"{title}: pass@k",
        ),
        plot_cost_vs_accuracy(
            by_difficulty, out_dir / "cost_vs_accuracy.png", f"{title}: cost vs accuracy"
        ),
    ]
    lines = [
        f"# {title}",
        "",
        "## Execution accuracy",
        "",
        markdown_table(table),
        "",
        *_sds_lines(frame),
        "## Retrieval",
        "",
        *(
            f"**{line}**" if line == NO_RETRIEVAL else f"- {line}"
            for line in retrieval_lines(metrics, retrieval, retrieval_expected)
        ),
        "",
        "## Cost",
        "",
        *(f"- {line}" for line in cost_lines(metrics, pricing, reference and reference[0])),
        "",
        *_judge_section(metrics),
        *_breakdown_lines(frame),
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


def _judge_section(metrics: dict[str, float]) -> list[str]:
    lines = judge_lines(metrics)
    if not lines:
        return []
    return ["## Answer correctness (LLM judge)", "", *(f"- {line}" for line in lines), ""]


def _sds_lines(frame: pl.DataFrame) -> list[str]:
    """EX by SDS bucket, for a benchmark that rates its questions' analytical depth."""
    table = ex_by_sds(frame)
    if table.is_empty():
        return []
    return [
        "## Execution accuracy by SDS bucket (analytical depth, 0-35)",
        "",
        markdown_table(table),
        "",
    ]


def _breakdown_lines(frame: pl.DataFrame) -> list[str]:
    """Where the answers come from (pipeline step, candidate family) and where right ones were lost."""
    shares = step_shares(frame)
    sections = [
        (
            "Answered at each step",
            pl.DataFrame({"step": list(shares), "share": list(shares.values())})
            if shares
            else pl.DataFrame(),
        ),
        ("Cost of each step (questions that ran it)", step_costs(frame)),
        ("Share of each candidate family's samples that are right", family_accuracy(frame)),
        ("Wrong answers by where the right one was lost (BIRD semantics)", losses(frame)),
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


# --- the ablation table across an experiment's runs -------------------------------------------

ABLATION_COLUMNS = (
    "ex_bird",
    "ex_spider",
    "r_ves",
    "calls_per_question",
    "tokens_per_question",
    "prompt_tokens_per_question",
    "completion_tokens_per_question",
    "cost_usd_per_question",
    "cost_usd_per_correct",
    "busy_s_per_question",
    "latency_mean_s",
    "latency_p50_s",
    "latency_p95_s",
    "pass_at_pool",
    "answered_by/first_wave",
    "answered_by/likelihood",
    "judge_correct",
    "judge_score_mean",
    "judge_agreement_ex",
    "judge_kappa_ex",
    "degraded_rate",
    "questions_scored",
    "retrieval_cells_share",
    "retrieval_examples_share",
)


def ablation_table(runs: pl.DataFrame, baseline: str = "full") -> pl.DataFrame:
    """One row per configuration: headline metrics, the largest pass@k, and ΔEX vs ``baseline``.

    ``runs`` has a ``run_name`` column and one column per metric (see ``tracking.experiment_runs``);
    when a configuration ran more than once, the latest run (first row) wins.
    """
    if runs.is_empty():
        raise ValueError("no runs to tabulate")
    runs = runs.unique(subset="run_name", keep="first", maintain_order=True)
    pass_columns = sorted(
        (c for c in runs.columns if c.startswith("pass_at_") and c[8:].isdigit()),
        key=lambda c: int(c[8:]),
    )
    priced = [c for c in runs.columns if c.startswith("cost_usd_per_") and "@" in c]
    columns = [c for c in ABLATION_COLUMNS if c in runs.columns] + priced + pass_columns[-1:]
    table = runs.select(pl.col("run_name").alias("configuration"), *columns)
    if "ex_bird" in table.columns and baseline in table.get_column("configuration").to_list():
        reference = table.filter(pl.col("configuration") == baseline).get_column("ex_bird")[0]
        table = table.with_columns((pl.col("ex_bird") - reference).alias(f"Δex_bird_vs_{baseline}"))
    return (
        table.sort("ex_bird", descending=True, nulls_last=True)
        if "ex_bird" in table.columns
        else table
    )


def write_experiment_report(table: pl.DataFrame, out_dir: Path, experiment: str) -> list[Path]:
    """``ablation.md``, ``ablation.csv`` and ``cost_vs_accuracy.png`` for an experiment."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv = out_dir / "ablation.csv"
    table.write_csv(csv)
    points = table.select(
        pl.col("configuration").alias("label"),
        *(
            pl.col(c)
            for c in ("tokens_per_question", "cost_usd_per_question", "ex_bird")
            if c in table.columns
        ),
    )
    plot = plot_cost_vs_accuracy(
        points, out_dir / "cost_vs_accuracy.png", f"{experiment}: cost vs accuracy"
    )
    md = out_dir / "ablation.md"
    md.write_text(
        f"# {experiment}\n\n{markdown_table(table)}\n\n![cost vs accuracy]({plot.name})\n",
        encoding="utf-8",
    )
    return [md, csv, plot]
