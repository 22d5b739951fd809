"""Per-task token and cost budget, shared by every call a task makes, and what calls cost.

    budget = TokenBudget(max_tokens=200_000, max_cost_usd=0.50)
    await client.chat(req, role="generator", budget=budget)   # reserve ─► call ─► charge

Before a call the client reserves the call's smallest possible spend (its prompt, estimated);
if that cannot fit beside what is spent and reserved by calls still in flight, the call is not
made (:class:`BudgetExceeded`). After the call the reservation is replaced by the real usage;
if that overflowed the budget, :class:`BudgetExceeded` carries the response so nothing is lost.

A call costs its slot's :class:`Price`: tokens at USD per million (hosted models) plus the
seconds the slot was busy with it at USD per hour (self-hosted models: CPU- or GPU-hours). A
task's calls that overlap on one slot share those seconds (:class:`BusyTime`): the machine is
rented by the hour however many of the task's requests it decodes together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import Field, model_validator

from core.types import Frozen, Usage
from models.errors import BudgetExceeded


class Price(Frozen):
    """What one model slot's calls cost: USD per million prompt / completion tokens, and USD per
    hour the slot is busy (``per_hour``: the CPU- or GPU-hours a self-hosted slot occupies).

    >>> Price(completion_per_mtok=2.0, per_hour=3.6).cost(0, 1_000_000, busy_s=10.0)
    2.01
    """

    prompt_per_mtok: float = Field(default=0.0, ge=0.0)
    completion_per_mtok: float = Field(default=0.0, ge=0.0)
    per_hour: float = Field(default=0.0, ge=0.0)

    def cost(self, prompt_tokens: int, completion_tokens: int, busy_s: float = 0.0) -> float:
        return (
            prompt_tokens * self.prompt_per_mtok + completion_tokens * self.completion_per_mtok
        ) / 1e6 + self.per_hour * busy_s / 3600

    def describe(self) -> str:
        """``$0.0893/h``, ``$0.40/$1.60 per Mtok``, both, or ``free``."""
        parts = []
        if self.prompt_per_mtok or self.completion_per_mtok:
            parts.append(f"${self.prompt_per_mtok:g}/${self.completion_per_mtok:g} per Mtok")
        if self.per_hour:
            parts.append(f"${self.per_hour:.4g}/h")
        return " + ".join(parts) or "free"


class PriceList(Frozen):
    """Reference prices (``conf/prices/default.yaml``, the one place they are set, with sources).

    ``cpu_hour`` / ``gpu_hour``: USD per hour of one vCPU / one GPU, which the model configs turn
    into each self-hosted slot's ``price.per_hour`` (times the slot's threads or GPUs).
    ``hosted``: list prices of hosted models, by name; ``reference`` names the one a run's
    tokens are also priced at (None: none), so a local run's cost can be set beside a hosted one.
    """

    cpu_hour: float = Field(ge=0.0)
    gpu_hour: float = Field(ge=0.0)
    hosted: dict[str, Price]
    reference: str | None

    @model_validator(mode="after")
    def _known_reference(self) -> PriceList:
        if self.reference is not None and self.reference not in self.hosted:
            raise ValueError(
                f"reference {self.reference!r} is not a hosted price; they are {sorted(self.hosted)}"
            )
        return self

    def reference_price(self) -> tuple[str, Price] | None:
        """``(name, list price)`` of the reference, or None."""
        return None if self.reference is None else (self.reference, self.hosted[self.reference])


class BusyTime:
    """Seconds each slot spent on one task's calls: per slot, the union of the calls' intervals,
    so calls of the task that overlap on a slot count once.

    >>> busy = BusyTime()
    >>> [busy.add("default", 0.0, 10.0), busy.add("default", 2.0, 5.0), busy.add("default", 8.0, 12.0)]
    [10.0, 0.0, 2.0]
    >>> busy.add("cheap", 2.0, 5.0)   # another slot is another machine
    3.0
    """

    def __init__(self) -> None:
        self._intervals: dict[str, list[tuple[float, float]]] = {}

    def add(self, slot: str, start: float, end: float) -> float:
        """Record a call on ``slot`` from ``start`` to ``end``; return the seconds it adds."""
        before = self._intervals.get(slot, [])
        merged = _merge([*before, (start, max(start, end))])
        self._intervals[slot] = merged
        return max(0.0, _length(merged) - _length(before))


def _merge(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(intervals: list[tuple[float, float]]) -> float:
    return sum(end - start for start, end in intervals)


@dataclass(frozen=True)
class Reservation:
    tokens: int
    cost_usd: float


@dataclass
class TokenBudget:
    """Mutable spend of one task; ``None`` limits are unlimited. Not shared across tasks."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    spent: Usage = field(default_factory=Usage)
    busy: BusyTime = field(default_factory=BusyTime)  # the task's seconds on each slot
    _reserved_tokens: int = 0
    _reserved_cost: float = 0.0

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise ValueError(f"TokenBudget.max_tokens must be positive, got {self.max_tokens}")
        if self.max_cost_usd is not None and self.max_cost_usd < 0:
            raise ValueError(f"TokenBudget.max_cost_usd must be >= 0, got {self.max_cost_usd}")

    @property
    def remaining_tokens(self) -> int | None:
        if self.max_tokens is None:
            return None
        return self.max_tokens - self.spent.total_tokens - self._reserved_tokens

    def reserve(self, tokens: int, cost_usd: float, *, what: str) -> Reservation:
        """Hold ``tokens``/``cost_usd`` for a call about to start, or raise if they cannot fit."""
        remaining = self.remaining_tokens
        if remaining is not None and tokens > remaining:
            committed = self.spent.total_tokens + self._reserved_tokens
            raise BudgetExceeded(
                f"token budget exhausted before {what}: {committed:,} of {self.max_tokens:,} "
                f"tokens spent or reserved, the call needs at least {tokens:,}"
            )
        if self.max_cost_usd is not None:
            committed_cost = self.spent.cost_usd + self._reserved_cost
            if committed_cost + cost_usd > self.max_cost_usd:
                raise BudgetExceeded(
                    f"cost budget exhausted before {what}: ${committed_cost:.4f} of "
                    f"${self.max_cost_usd:.4f} spent or reserved, the call needs at least ${cost_usd:.4f}"
                )
        self._reserved_tokens += tokens
        self._reserved_cost += cost_usd
        return Reservation(tokens, cost_usd)

    def release(self, reservation: Reservation) -> None:
        self._reserved_tokens -= reservation.tokens
        self._reserved_cost -= reservation.cost_usd

    def charge(self, usage: Usage) -> bool:
        """Add a finished call's usage; False when the budget is now overdrawn."""
        self.spent = self.spent + usage
        over_tokens = self.max_tokens is not None and self.spent.total_tokens > self.max_tokens
        over_cost = self.max_cost_usd is not None and self.spent.cost_usd > self.max_cost_usd
        return not (over_tokens or over_cost)

    def describe(self) -> str:
        limits = []
        if self.max_tokens is not None:
            limits.append(f"{self.spent.total_tokens:,}/{self.max_tokens:,} tokens")
        if self.max_cost_usd is not None:
            limits.append(f"${self.spent.cost_usd:.4f}/${self.max_cost_usd:.4f}")
        return ", ".join(limits) or "unlimited"
