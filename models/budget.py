"""Per-task token and cost budget, shared by every call a task makes.

    budget = TokenBudget(max_tokens=200_000, max_cost_usd=0.50)
    await client.chat(req, role="generator", budget=budget)   # reserve ─► call ─► charge

Before a call the client reserves the call's smallest possible spend (its prompt, estimated);
if that cannot fit beside what is spent and reserved by calls still in flight, the call is not
made (:class:`BudgetExceeded`). After the call the reservation is replaced by the real usage;
if that overflowed the budget, :class:`BudgetExceeded` carries the response so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import Field

from core.types import Frozen, Usage
from models.errors import BudgetExceeded


class Price(Frozen):
    """USD per million tokens of one model slot (0 for local models)."""

    prompt_per_mtok: float = Field(default=0.0, ge=0.0)
    completion_per_mtok: float = Field(default=0.0, ge=0.0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.prompt_per_mtok + completion_tokens * self.completion_per_mtok
        ) / 1e6


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
