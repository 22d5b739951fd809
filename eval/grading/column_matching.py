"""Execution accuracy by column matching: does the prediction hold the gold answer, whatever
else it shows and however it orders its columns?

``ex_columns`` is the third semantics beside ``ex_bird`` and ``ex_spider`` (eval/metrics):

* every gold column must be matched by some predicted column: column order is free and extra
  predicted columns (an id beside a name, a count beside a percentage) are allowed;
* the rows, projected onto the matched columns, must equal the gold rows as a multiset, or as
  a list when the gold query's outermost SELECT has ORDER BY;
* two numbers are equal within a relative 1e-4 (``REL_TOL``), or within half a unit of the
  last decimal the gold query rounds that column to (``round(x, 1)``: 18.94 matches 18.9,
  19.0 does not); two integers are equal only when equal. Text, dates and NULLs compare as the
  sandbox's canonical cells (eval/metrics ``comparable_cell``).

The column rule is Spider 2.0's evaluator (``compare_pandas_table`` in xlang-ai/Spider2,
``spider2-lite/evaluation_suite/evaluate.py``): each gold column vector (``condition_cols``
selects which) must match some predicted column vector, sorted first when ``ignore_order``,
numbers by ``math.isclose(abs_tol=1e-2)``. Spider 2.0 compares the columns one by one, so rows
need not stay together; here the matched columns are then compared row by row, so a prediction
whose names and counts are each right but paired wrongly is wrong. A relative tolerance
replaces the fixed 1e-2, which would equate 0.012 and 0.019.

    >>> ok = ExecutionResult(rows=(("ISS-1", "Login", 3),), hash="p")
    >>> gold = ExecutionResult(rows=((3, "Login"),), hash="g")
    >>> ex_columns(ok, gold, "SELECT count(*), title FROM issues GROUP BY title")
    True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from eval.metrics import comparable_cell, order_matters
from pipelines.contracts import ExecutionResult

REL_TOL = 1e-4
# Above this many column assignments a prediction is judged on the first ones only: columns with
# equal values are merged first, so real results stay far below it.
MAX_ASSIGNMENTS = 4096

Cell = Any
Column = tuple[Cell, ...]


def ex_columns(pred: ExecutionResult, gold: ExecutionResult, gold_sql: str) -> bool:
    """Column-matching execution accuracy of ``pred`` against ``gold`` (see the module doc).

    ``gold_sql`` says whether row order counts (an outermost ORDER BY) and which gold columns
    are rounded, to how many decimals. Errors and truncated results are wrong.
    """
    if not (pred.ok and gold.ok) or pred.truncated or gold.truncated:
        return False
    gold_rows = [tuple(comparable_cell(cell) for cell in row) for row in gold.rows]
    pred_rows = [tuple(comparable_cell(cell) for cell in row) for row in pred.rows]
    if not gold_rows:
        return not pred_rows
    if len(pred_rows) != len(gold_rows) or not pred_rows[0]:
        return False
    ordered = _orders(gold_sql)
    width = len(gold_rows[0])
    decimals = stated_decimals(gold_sql, width)
    gold_columns = list(zip(*gold_rows, strict=True))
    # Predicted columns holding the same values are interchangeable: keep one of each.
    pred_columns = list(dict.fromkeys(zip(*pred_rows, strict=True)))
    candidates = [
        [p for p in pred_columns if _columns_match(p, g, d, ordered)]
        for g, d in zip(gold_columns, decimals, strict=True)
    ]
    if not all(candidates):
        return False
    for assignment in itertools.islice(itertools.product(*candidates), MAX_ASSIGNMENTS):
        projected = list(zip(*assignment, strict=True))
        if _rows_match(projected, gold_rows, decimals, ordered):
            return True
    return False


def stated_decimals(gold_sql: str, width: int) -> tuple[int | None, ...]:
    """Per gold column, the decimals the gold query rounds it to (None: not rounded).

    A column counts as rounded when its outermost projection is ``round(x, d)`` (``round(x)``:
    0), possibly cast, or names a column that a CTE or subquery computes that way.

    >>> stated_decimals("SELECT tier, round(100.0 * avg(x), 1) AS pct FROM t GROUP BY tier", 2)
    (None, 1)
    """
    try:
        tree = sqlglot.parse_one(gold_sql, read="duckdb")
    except SqlglotError:
        return (None,) * width
    outer = _first_select(tree)
    if outer is None or len(outer.expressions) != width:
        return (None,) * width
    inner = {
        projection.alias_or_name: projection
        for select in tree.find_all(exp.Select)
        if select is not outer
        for projection in select.expressions
    }
    return tuple(_rounding(projection, inner) for projection in outer.expressions)


def _first_select(tree: exp.Expression) -> exp.Select | None:
    while isinstance(tree, (exp.SetOperation, exp.Subquery)):
        tree = tree.this
    return tree if isinstance(tree, exp.Select) else None


def _rounding(projection: exp.Expression, inner: dict[str, exp.Expression]) -> int | None:
    node = _unwrap(projection)
    if isinstance(node, exp.Column) and node.name in inner:
        node = _unwrap(inner[node.name])
    if not isinstance(node, exp.Round):
        return None
    digits = node.args.get("decimals")
    if digits is None:
        return 0
    return int(digits.this) if isinstance(digits, exp.Literal) and digits.is_int else None


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, (exp.Alias, exp.Cast, exp.Paren)):
        node = node.this
    return node


def _orders(gold_sql: str) -> bool:
    """Whether the gold query's outermost SELECT (or set operation) has ORDER BY."""
    try:
        tree = sqlglot.parse_one(gold_sql, read="duckdb")
    except SqlglotError:
        return order_matters(gold_sql)
    return tree.args.get("order") is not None


def _same(pred: Cell, gold: Cell, decimals: int | None) -> bool:
    if pred == gold:
        return True
    numbers = (int, float)
    if not (isinstance(pred, numbers) and isinstance(gold, numbers)):
        return False
    if math.isnan(pred) or math.isnan(gold):
        return math.isnan(pred) and math.isnan(gold)
    if isinstance(pred, int) and isinstance(gold, int) and decimals is None:
        return False  # counts are exact
    allowed = REL_TOL * max(abs(pred), abs(gold))
    if decimals is not None:
        allowed = max(allowed, 0.5 * 10.0**-decimals + 1e-9)
    return abs(pred - gold) <= allowed


def _sort_key(cell: Cell) -> tuple[int, Any]:
    """A total order over canonical cells in which values within the tolerance sit together."""
    if cell is None:
        return (0, 0)
    if isinstance(cell, (int, float)):
        return (2, 0) if math.isnan(cell) else (1, cell)
    if isinstance(cell, str):
        return (3, cell)
    return (4, repr(cell))


def _columns_match(pred: Column, gold: Column, decimals: int | None, ordered: bool) -> bool:
    if not ordered:
        pred, gold = sorted(pred, key=_sort_key), sorted(gold, key=_sort_key)
    return all(_same(p, g, decimals) for p, g in zip(pred, gold, strict=True))


def _row_key(row: Sequence[Cell]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Text and NULL cells first, numbers after: rows pair on their exact cells, then in order
    of their numbers (a pairing that only exists by crossing numbers closer than the tolerance
    is not searched)."""
    exact = tuple(_sort_key(c) for c in row if not isinstance(c, (int, float)))
    numeric = tuple(_sort_key(c) for c in row if isinstance(c, (int, float)))
    return exact, numeric


def _rows_match(
    pred: list[tuple[Cell, ...]],
    gold: list[tuple[Cell, ...]],
    decimals: Sequence[int | None],
    ordered: bool,
) -> bool:
    if not ordered:
        pred, gold = sorted(pred, key=_row_key), sorted(gold, key=_row_key)
    return all(
        _same(p, g, d)
        for pred_row, gold_row in zip(pred, gold, strict=True)
        for p, g, d in zip(pred_row, gold_row, decimals, strict=True)
    )
