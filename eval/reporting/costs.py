"""Cost per question and per correct answer: at the configured prices, and at a hosted reference.

    run_metrics(frame) ──► cost_usd_per_question, cost_usd_per_correct (absent: none correct)
    reference_costs(metrics, price) ──► ref_cost_usd_per_question, ref_cost_usd_per_correct:
                                        the run's tokens at a hosted model's list price
    cost_lines(metrics, pricing, reference) ──► what the summary and the report print

The configured cost is what each question's calls cost at the slots' prices when it was
answered (tokens at USD per million, busy seconds at USD per hour: ``models.budget``). Per
correct answer is the run's total cost over the questions answered correctly (EX, BIRD
semantics); with none correct there is no such figure: "n/a (none correct)".

    >>> from models.budget import Price
    >>> metrics = {"prompt_tokens_per_question": 2e6, "completion_tokens_per_question": 1e5,
    ...            "prompt_tokens_per_correct": 4e6, "completion_tokens_per_correct": 2e5}
    >>> reference_costs(metrics, Price(prompt_per_mtok=0.40, completion_per_mtok=1.60))
    {'ref_cost_usd_per_question': 0.96, 'ref_cost_usd_per_correct': 1.92}
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from models.budget import Price
from models.config import ModelSettings

REF_PREFIX = "ref_"  # ref_cost_usd_per_question: the run's tokens at the reference price
_PER = ("per_question", "per_correct")


def reference_costs(metrics: Mapping[str, float], price: Price) -> dict[str, float]:
    """The run's tokens priced at ``price``, per question and per correct answer, from its token
    metrics (so a finished run is priced again from what MLflow holds); per correct is absent
    when no question was right."""
    costs = {}
    for per in _PER:
        prompt = metrics.get(f"prompt_tokens_{per}")
        completion = metrics.get(f"completion_tokens_{per}")
        if prompt is not None and completion is not None:
            costs[f"{REF_PREFIX}cost_usd_{per}"] = round(price.cost(prompt, completion), 12)
    return costs


def with_reference_costs(runs: pl.DataFrame, reference: tuple[str, Price] | None) -> pl.DataFrame:
    """``runs`` (one row per MLflow run, a column per metric) with the reference costs priced
    again at ``reference`` from the token metrics, as ``cost_usd_per_question@<name>`` and
    ``cost_usd_per_correct@<name>``; the ``ref_`` columns the runs logged (at whichever
    reference they ran with) are dropped."""
    runs = runs.drop([c for c in runs.columns if c.startswith(REF_PREFIX)])
    if reference is None:
        return runs
    name, price = reference
    return runs.with_columns(
        (
            (
                pl.col(f"prompt_tokens_{per}") * price.prompt_per_mtok
                + pl.col(f"completion_tokens_{per}") * price.completion_per_mtok
            )
            / 1e6
        ).alias(f"cost_usd_{per}@{name}")
        for per in _PER
        if {f"prompt_tokens_{per}", f"completion_tokens_{per}"} <= set(runs.columns)
    )


def slot_prices(model: ModelSettings) -> str:
    """``default $0.0892/h``: each slot's price, as the summary names the configured prices."""
    return ", ".join(f"{name} {slot.price.describe()}" for name, slot in model.slots.items())


def usd(value: float | None) -> str:
    """``$0.00123``, ``$12.50``; ``n/a`` when there is no figure."""
    if value is None:
        return "n/a"
    return f"${value:,.2f}" if value >= 1 else f"${value:.3g}"


def per_correct(metrics: Mapping[str, float], name: str = "cost_usd_per_correct") -> str:
    """The per-correct figure, or why there is none."""
    if name in metrics:
        return usd(metrics[name])
    return "n/a (none correct)" if metrics.get("questions_scored") else "n/a (nothing scored)"


def cost_lines(metrics: Mapping[str, float], pricing: str, reference: str | None) -> list[str]:
    """Cost per question and per correct answer at the configured prices (``pricing`` names
    them) and, with a ``reference``, at its list prices."""
    lines = [
        f"{usd(metrics.get('cost_usd_per_question'))}/question, {per_correct(metrics)}/correct"
        f" at the configured prices ({pricing or 'free'})"
        + (
            f"; model busy {metrics['busy_s_per_question']:.1f} s/question"
            if "busy_s_per_question" in metrics
            else ""
        )
    ]
    if reference is not None and f"{REF_PREFIX}cost_usd_per_question" in metrics:
        lines.append(
            f"{usd(metrics[f'{REF_PREFIX}cost_usd_per_question'])}/question, "
            f"{per_correct(metrics, f'{REF_PREFIX}cost_usd_per_correct')}/correct"
            f" with its tokens at {reference} list prices"
        )
    return lines
