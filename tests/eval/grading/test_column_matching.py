"""ex_columns: right answers in another shape pass (extra columns, other column order, unrounded
values where the gold rounds), and wrong answers still fail (a missing gold column, a wrong
row, a wrong number, another unit or label, rows paired wrongly, a lost duplicate)."""

from __future__ import annotations

import pytest

from eval.grading.column_matching import ex_columns, stated_decimals
from pipelines.contracts import ExecutionResult

BY_NAME = "SELECT u.display_name, count(*) AS n FROM users AS u GROUP BY u.user_id, u.display_name"
BY_NAME_ORDERED = BY_NAME + " ORDER BY n DESC, u.display_name"
ROUNDED = "SELECT priority, round(avg(d) / 86400.0, 1) AS avg_days FROM issues GROUP BY priority"
UNROUNDED = "SELECT priority, avg(d) / 86400.0 AS avg_days FROM issues GROUP BY priority"


def result(*rows: tuple) -> ExecutionResult:
    return ExecutionResult(rows=rows, row_count=len(rows), hash="h")


GOLD = result(("Ann", 3), ("Bob", 2), ("Cid", 2))


@pytest.mark.parametrize(
    ("pred", "why"),
    [
        (result(("Ann", 3), ("Bob", 2), ("Cid", 2)), "the same result"),
        (result((7, "Ann", 3), (9, "Bob", 2), (4, "Cid", 2)), "an extra id column"),
        (result((3, "Ann"), (2, "Bob"), (2, "Cid")), "columns in another order"),
        (result(("Cid", 2), ("Ann", 3), ("Bob", 2)), "rows in another order, gold unordered"),
        (result(("Ann", 3.0), ("Bob", 2.0), ("Cid", 2.0)), "counts as floats"),
        (result(("Ann", "A", 3, 0.5), ("Bob", "B", 2, 0.25), ("Cid", "C", 2, 0.25)), "extras"),
    ],
)
def test_the_answer_in_another_shape_passes(pred, why):
    assert ex_columns(pred, GOLD, BY_NAME), why


@pytest.mark.parametrize(
    ("pred", "why"),
    [
        (result(("Ann",), ("Bob",), ("Cid",)), "a missing gold column"),
        (result(("Ann", 3), ("Bob", 2), ("Dee", 2)), "a wrong row"),
        (result(("Ann", 3), ("Bob", 2), ("Cid", 1)), "a wrong number"),
        (result(("Ann", 2), ("Bob", 3), ("Cid", 2)), "right columns, rows paired wrongly"),
        (result(("Ann", 3), ("Bob", 2)), "a missing row"),
        (result(("Ann", 3), ("Bob", 2), ("Cid", 2), ("Cid", 2)), "an extra duplicate row"),
        (result(("ann", 3), ("bob", 2), ("cid", 2)), "another spelling of the labels"),
    ],
)
def test_a_wrong_answer_still_fails(pred, why):
    assert not ex_columns(pred, GOLD, BY_NAME), why


def test_row_order_counts_only_when_the_gold_query_orders():
    shuffled = result(("Bob", 2), ("Ann", 3), ("Cid", 2))
    assert ex_columns(shuffled, GOLD, BY_NAME)
    assert not ex_columns(shuffled, GOLD, BY_NAME_ORDERED)
    assert ex_columns(result((1, "Ann", 3), (2, "Bob", 2), (3, "Cid", 2)), GOLD, BY_NAME_ORDERED)
    # an ORDER BY inside a window or a CTE orders nothing in the result
    windowed = (
        "WITH t AS (SELECT * FROM x ORDER BY a LIMIT 3) SELECT a, rank() OVER (ORDER BY a) FROM t"
    )
    assert ex_columns(shuffled, GOLD, windowed)


def test_a_rounded_gold_column_accepts_values_within_half_its_last_decimal():
    gold = result(("p1", 18.9), ("p2", 58.7))
    assert ex_columns(result(("p1", 18.94), ("p2", 58.66)), gold, ROUNDED)  # unrounded
    assert not ex_columns(result(("p1", 19.0), ("p2", 58.7)), gold, ROUNDED)  # 0.1 off
    assert not ex_columns(result(("p1", 19), ("p2", 59)), gold, ROUNDED)  # whole days


def test_an_unrounded_gold_column_allows_a_relative_1e_4():
    gold = result(("p1", 18.912345), ("p2", 58.7))
    assert ex_columns(result(("p1", 18.9135), ("p2", 58.7001)), gold, UNROUNDED)
    assert not ex_columns(result(("p1", 18.9), ("p2", 58.7)), gold, UNROUNDED)


def test_counts_are_exact_and_units_are_not_converted():
    big = "SELECT count(*) FROM tickets"
    assert not ex_columns(result((10_001,)), result((10_000,)), big)
    pct = "SELECT round(100.0 * avg(b), 1) AS pct FROM t"
    assert not ex_columns(result((0.189,)), result((18.9,)), pct)  # a fraction, not a percentage


def test_a_label_or_flag_must_be_the_gold_value():
    """'breached'/'within' for a boolean, 'ticket' for 'tickets': another answer to read."""
    flag = "SELECT breached, round(avg(c), 2) AS csat FROM t GROUP BY breached"
    gold = result((0, 3.92), (1, 2.96))  # the sandbox's canonical booleans
    assert ex_columns(result((1, 2.96), (0, 3.92)), gold, flag)
    assert not ex_columns(result(("within", 3.92), ("breached", 2.96)), gold, flag)
    kinds = "SELECT 'tickets' AS kind, count(*) FROM tickets UNION ALL SELECT 'issues', count(*) FROM issues"
    assert not ex_columns(
        result(("ticket", 5), ("issue", 2)), result(("tickets", 5), ("issues", 2)), kinds
    )


def test_errors_truncation_and_empty_results():
    failed = ExecutionResult(error="Binder Error", hash="ERR:x")
    assert not ex_columns(failed, GOLD, BY_NAME)
    assert not ex_columns(GOLD, failed, BY_NAME)
    truncated = ExecutionResult(rows=GOLD.rows, row_count=3, hash="h", truncated=True)
    assert not ex_columns(truncated, GOLD, BY_NAME)
    assert ex_columns(result(), result(), BY_NAME)
    assert not ex_columns(GOLD, result(), BY_NAME)
    assert not ex_columns(result(), GOLD, BY_NAME)


def test_many_interchangeable_columns_are_matched_without_blowing_up():
    gold = result(*[(0, 0, 0, 0, 0, 0, i) for i in range(5)])
    pred = result(*[(i,) + (0,) * 12 for i in range(5)])
    assert ex_columns(pred, gold, "SELECT a, b, c, d, e, f, g FROM t")


@pytest.mark.parametrize(
    ("sql", "width", "expected"),
    [
        (ROUNDED, 2, (None, 1)),
        (UNROUNDED, 2, (None, None)),
        ("SELECT round(x) AS r, round(y, 2)::DOUBLE AS s FROM t", 2, (0, 2)),
        ("WITH m AS (SELECT round(x, 2) AS csat FROM t) SELECT month, csat FROM m", 2, (None, 2)),
        ("SELECT 'a', round(x, 1) FROM t UNION ALL SELECT 'b', 2.0", 2, (None, 1)),
        ("SELECT * FROM t", 2, (None, None)),
        ("SELECT FROM WHERE (", 1, (None,)),
    ],
)
def test_stated_decimals_reads_the_gold_rounding(sql, width, expected):
    assert stated_decimals(sql, width) == expected
