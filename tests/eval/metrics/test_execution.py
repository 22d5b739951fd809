"""EX under BIRD (set) and Spider test-suite (bag, ORDER BY, column permutation) semantics."""

from __future__ import annotations

import itertools
import random

import pytest

from eval.metrics import ex_bird, ex_spider, order_matters
from pipelines.contracts import ExecutionResult


def result(rows, error: str | None = None, truncated: bool = False) -> ExecutionResult:
    rows = tuple(tuple(r) for r in rows)
    return ExecutionResult(
        rows=rows,
        row_count=len(rows),
        error=error,
        error_kind="sql_error" if error else None,
        hash="ERR:x" if error else "h",
        truncated=truncated,
    )


# --- hand-checked cases: (pred, gold, order_matters, spider verdict, bird verdict) -----------

CASES = [
    pytest.param(
        [(1, "a"), (2, "b")], [(2, "b"), (1, "a")], False, True, True, id="row order ignored"
    ),
    pytest.param(
        [(1, "a"), (2, "b")], [(2, "b"), (1, "a")], True, False, True, id="ORDER BY: order compared"
    ),
    pytest.param(
        [(2, "b"), (1, "a")], [(2, "b"), (1, "a")], True, True, True, id="ORDER BY: same order"
    ),
    pytest.param(
        [("a", 1), ("b", 2)], [(1, "a"), (2, "b")], False, True, False, id="column permutation"
    ),
    pytest.param(
        [("b", 2), ("a", 1)], [(1, "a"), (2, "b")], True, False, False, id="permuted and reordered"
    ),
    pytest.param(
        [(1,), (1,), (2,)],
        [(1,), (2,), (2,)],
        False,
        False,
        True,
        id="bag: duplicate counts differ",
    ),
    pytest.param([(1,), (2,)], [(1,), (1,), (2,)], False, False, True, id="bag: missing duplicate"),
    pytest.param([(0.1 + 0.2,)], [(0.3,)], False, True, True, id="float noise"),
    pytest.param([(0.3001,)], [(0.3,)], False, False, False, id="real float difference"),
    pytest.param([(2.0,)], [(2,)], False, True, True, id="2.0 equals 2"),
    pytest.param([], [], False, True, True, id="both empty"),
    pytest.param([(None,)], [], False, False, False, id="empty vs a NULL row"),
    pytest.param([(1, 2)], [(1,)], False, False, False, id="extra column"),
    pytest.param(
        [(1, 1), (2, 2)], [(1, 2), (2, 1)], False, False, False, id="same values, other pairing"
    ),
    pytest.param([("x", None, 1)], [(1, "x", None)], False, True, False, id="mixed types permuted"),
]


@pytest.mark.parametrize(("pred", "gold", "ordered", "spider", "bird"), CASES)
def test_hand_checked_cases(pred, gold, ordered, spider, bird):
    assert ex_spider(pred, gold, order_matters=ordered) is spider
    assert ex_bird(result(pred), result(gold)) is bird


def test_errors_timeouts_and_truncation_are_wrong():
    gold = result([(1,)])
    assert not ex_bird(result([], error="no such column: x"), gold)
    assert not ex_bird(result([(1,)], truncated=True), gold)
    assert not ex_bird(result([(1,)]), result([], error="gold broke"))


def test_order_matters_follows_the_gold_sql():
    assert order_matters("SELECT name FROM t ORDER BY age DESC")
    assert order_matters("select name from t order\n  by age")
    assert order_matters("SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 3)")
    assert not order_matters("SELECT border_by FROM t")
    assert not order_matters("SELECT count(*) FROM t GROUP BY a")


def _brute_force_spider(pred, gold, ordered: bool) -> bool:
    """Reference: try every column permutation and compare sorted / as-is rows."""
    if not pred and not gold:
        return True
    if len(pred) != len(gold) or len(pred[0]) != len(gold[0]):
        return False
    for perm in itertools.permutations(range(len(gold[0]))):
        permuted = [tuple(row[j] for j in perm) for row in pred]
        if (permuted == gold) if ordered else (sorted(permuted) == sorted(gold)):
            return True
    return False


@pytest.mark.parametrize("seed", range(5))
def test_ex_spider_matches_brute_force_on_random_tables(seed):
    rng = random.Random(seed)
    for _ in range(300):
        width, height = rng.randint(1, 4), rng.randint(0, 4)
        gold = [tuple(rng.randint(0, 2) for _ in range(width)) for _ in range(height)]
        # a prediction that is often a shuffled / permuted / perturbed copy of gold
        perm = rng.sample(range(width), width)
        pred = [tuple(row[j] for j in perm) for row in gold]
        if rng.random() < 0.5:
            rng.shuffle(pred)
        if pred and rng.random() < 0.3:
            pred[rng.randrange(len(pred))] = tuple(rng.randint(0, 2) for _ in range(width))
        ordered = rng.random() < 0.5
        assert ex_spider(pred, gold, ordered) == _brute_force_spider(pred, gold, ordered), (
            pred,
            gold,
            ordered,
        )
