import pytest

from core.types import Usage
from models.budget import Price, TokenBudget
from models.errors import BudgetExceeded


def test_price_per_million_tokens() -> None:
    assert Price(prompt_per_mtok=2.0, completion_per_mtok=8.0).cost(
        500_000, 250_000
    ) == pytest.approx(3.0)


def test_reservation_blocks_a_call_that_cannot_fit() -> None:
    budget = TokenBudget(max_tokens=1000)
    first = budget.reserve(600, 0.0, what="call 1")
    with pytest.raises(BudgetExceeded, match="before call 2"):
        budget.reserve(500, 0.0, what="call 2")
    budget.release(first)
    budget.reserve(500, 0.0, what="call 2")  # fits once the first reservation is gone


def test_charge_reports_overdraft() -> None:
    budget = TokenBudget(max_tokens=100, max_cost_usd=1.0)
    assert budget.charge(Usage(calls=1, prompt_tokens=40, completion_tokens=50, cost_usd=0.5))
    assert not budget.charge(Usage(calls=1, prompt_tokens=5, completion_tokens=10))
    assert budget.spent.total_tokens == 105 and budget.spent.calls == 2
    assert budget.remaining_tokens == -5


def test_cost_limit() -> None:
    budget = TokenBudget(max_cost_usd=0.01)
    budget.charge(Usage(cost_usd=0.008))
    with pytest.raises(BudgetExceeded, match="cost budget"):
        budget.reserve(10, 0.005, what="x")


def test_unlimited_budget_and_invalid_limits() -> None:
    budget = TokenBudget()
    budget.reserve(10**9, 10**6, what="huge")
    assert budget.charge(Usage(prompt_tokens=10**9)) and budget.describe() == "unlimited"
    with pytest.raises(ValueError):
        TokenBudget(max_tokens=0)
