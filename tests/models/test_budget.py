import pytest

from core.types import Usage
from models.budget import BusyTime, Price, TokenBudget
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


def test_an_hourly_price_charges_busy_seconds() -> None:
    price = Price(prompt_per_mtok=1.0, per_hour=36.0)
    assert price.cost(1_000_000, 0, busy_s=100.0) == pytest.approx(1.0 + 1.0)
    assert price.cost(1_000_000, 0) == pytest.approx(1.0)


def test_busy_time_is_the_union_of_a_slots_intervals() -> None:
    busy = BusyTime()
    added = [
        busy.add("default", 5.0, 8.0),
        busy.add("default", 0.0, 2.0),  # before, apart
        busy.add("default", 1.0, 6.0),  # bridges both: only the gap 2..5 is new
        busy.add("default", 0.5, 7.5),  # inside what is counted
        busy.add("cheap", 0.0, 8.0),  # another slot counts on its own
    ]
    assert added == pytest.approx([3.0, 2.0, 3.0, 0.0, 8.0])
