"""Cost per question and per correct answer: at the configured prices, and at a hosted reference.

    predictions ──► costs(frame, correct, model settings, reference) ──► Costs:
        spend per question and per correct answer (None: none correct) at the slots' prices,
        and the run's tokens at a hosted model's list price (reference_costs)
    cost_lines(costs, scored) ──► what the summary and the report print

The configured cost is what each question's calls cost at the slots' prices when it was
answered (tokens at USD per million, busy seconds at USD per hour: ``models.budget``). Per
correct answer is the run's total cost over the questions answered correctly (EX, BIRD
semantics); with none correct there is no such figure: "n/a (none correct)".

    >>> from models.budget import Price
    >>> tokens = Spend(calls=1, prompt_tokens=2e6, completion_tokens=1e5, tokens=2.1e6, cost_usd=0)
    >>> reference_costs("mini", Price(prompt_per_mtok=0.40, completion_per_mtok=1.60), tokens, None)
    ReferenceCost(name='mini', per_question=0.96, per_correct=None)
"""

from __future__ import annotations

import polars as pl

from core.types import Frozen
from models.budget import Price
from models.config import ModelSettings

REF_PREFIX = "ref_"  # ref_cost_usd_per_question: the run's tokens at the reference price
_PER = ("per_question", "per_correct")


class Spend(Frozen):
    """A run's calls, tokens, dollars and model seconds over its questions or its right answers."""

    calls: float
    prompt_tokens: float
    completion_tokens: float
    tokens: float
    cost_usd: float
    busy_s: float | None = None  # absent from predictions written before it was recorded

    def figures(self, per: str) -> dict[str, float]:
        """``{"calls_per_question": …}`` for ``per="per_question"``."""
        return {
            f"{name}_{per}": value for name, value in self.model_dump(exclude_none=True).items()
        }


class ReferenceCost(Frozen):
    """The run's tokens at a hosted model's list price (``prices.reference``)."""

    name: str
    per_question: float | None = None
    per_correct: float | None = None  # None: no question was right

    def figures(self) -> dict[str, float]:
        values = {"per_question": self.per_question, "per_correct": self.per_correct}
        return {f"{REF_PREFIX}cost_usd_{per}": v for per, v in values.items() if v is not None}


class Costs(Frozen):
    """What a run's answers cost: at the configured prices, and at a hosted reference."""

    pricing: str = ""  # the slots' prices, e.g. "default $0.0892/h"
    per_question: Spend | None = None  # None: no question
    per_correct: Spend | None = None  # None: no question was right
    reference: ReferenceCost | None = None

    def figures(self) -> dict[str, float]:
        figures = self.per_question.figures("per_question") if self.per_question else {}
        if self.per_correct is not None:
            figures |= self.per_correct.figures("per_correct")
        return figures | (self.reference.figures() if self.reference else {})


def costs(
    frame: pl.DataFrame,
    correct: int,
    model: ModelSettings | None = None,
    reference: tuple[str, Price] | None = None,
) -> Costs:
    """``frame``'s spend per question and per ``correct`` answer, at the prices of ``model``'s
    slots (as recorded per question) and, with a ``reference``, at that hosted list price."""
    pricing = slot_prices(model) if model is not None else ""
    if frame.height == 0:
        return Costs(pricing=pricing)
    per_question, per_correct = spend(frame, correct)
    return Costs(
        pricing=pricing,
        per_question=per_question,
        per_correct=per_correct,
        reference=reference and reference_costs(*reference, per_question, per_correct),
    )


def spend(frame: pl.DataFrame, correct: int) -> tuple[Spend, Spend | None]:
    """Per question and per correct answer (None when none is right): the totals over each."""
    totals = frame.select(
        pl.col("calls").sum(),
        pl.col("prompt_tokens").sum(),
        pl.col("completion_tokens").sum(),
        (pl.col("prompt_tokens") + pl.col("completion_tokens")).sum().alias("tokens"),
        pl.col("cost_usd").sum(),
        *([pl.col("busy_s").sum()] if "busy_s" in frame.columns else []),
    ).row(0, named=True)
    per_question = Spend(**{name: total / frame.height for name, total in totals.items()})
    if not correct:
        return per_question, None
    return per_question, Spend(**{name: total / correct for name, total in totals.items()})


def reference_costs(
    name: str, price: Price, per_question: Spend | None, per_correct: Spend | None
) -> ReferenceCost:
    """The run's tokens priced at ``price``, per question and per correct answer."""

    def priced(tokens: Spend | None) -> float | None:
        if tokens is None:
            return None
        return round(price.cost(tokens.prompt_tokens, tokens.completion_tokens), 12)

    return ReferenceCost(
        name=name, per_question=priced(per_question), per_correct=priced(per_correct)
    )


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


def per_correct(value: float | None, scored: int) -> str:
    """The per-correct figure, or why there is none."""
    if value is not None:
        return usd(value)
    return "n/a (none correct)" if scored else "n/a (nothing scored)"


class CostTexts(Frozen):
    """A run's costs as the summary shows them: its table's cells and its cost lines."""

    per_question: str
    per_correct: str
    lines: tuple[str, ...]


def cost_texts(costs: Costs, scored: int) -> CostTexts:
    """The summary's ``$/question`` and ``$/correct`` cells of ``costs``, and its cost lines."""
    spent, right = costs.per_question, costs.per_correct
    return CostTexts(
        per_question=usd(spent.cost_usd if spent else None),
        per_correct=per_correct(right.cost_usd if right else None, scored),
        lines=tuple(cost_lines(costs, scored)),
    )


def cost_lines(costs: Costs, scored: int) -> list[str]:
    """Cost per question and per correct answer at the configured prices (``costs.pricing``
    names them) and, with a reference, at its list prices."""
    spent, right, reference = costs.per_question, costs.per_correct, costs.reference
    busy = spent.busy_s if spent else None
    lines = [
        f"{usd(spent.cost_usd if spent else None)}/question, "
        f"{per_correct(right.cost_usd if right else None, scored)}/correct"
        f" at the configured prices ({costs.pricing or 'free'})"
        + (f"; model busy {busy:.1f} s/question" if busy is not None else "")
    ]
    if reference is not None and reference.per_question is not None:
        lines.append(
            f"{usd(reference.per_question)}/question, "
            f"{per_correct(reference.per_correct, scored)}/correct"
            f" with its tokens at {reference.name} list prices"
        )
    return lines
