"""Execution accuracy: does the predicted SQL return the gold SQL's result?

Two official semantics, one per benchmark family:

============  ==========================================  ===============================
metric        rows compared as                            source
============  ==========================================  ===============================
``ex_bird``   a set (duplicates and order ignored)        BIRD ``evaluation_ex.py``:
                                                          ``set(pred) == set(gold)``
``ex_spider`` a bag (duplicates count); order only when   Spider test-suite
              the gold SQL has ORDER BY; columns may be   ``exec_eval.result_eq``
              permuted
============  ==========================================  ===============================

Both compare cells in the sandbox's canonical form (:func:`comparable_cell`): floats rounded to
6 decimals (so ``0.1 + 0.2`` equals ``0.3``), integral floats folded into ints (``2.0`` equals
``2``, as Python's ``==`` already says), trailing spaces stripped. The official scripts compare
raw values; this forgives only float noise below 1e-6 and trailing whitespace. A prediction
that errors or times out is wrong in both.

Spider's ``evaluation.py`` by default also deletes DISTINCT from both queries before running
them; here the queries run as written (its ``--keep_distinct`` mode), so a missing DISTINCT
that changes the bag of rows is wrong. Values are not plugged in from the gold query.

    >>> ex_spider([(1, "a"), (1, "a")], [("a", 1), ("a", 1)], order_matters=False)
    True
    >>> ex_spider([(1,)], [(1,), (1,)], order_matters=False)   # bag: duplicates matter
    False
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from pipelines.contracts import ExecutionResult
from pipelines.sandbox.canonical import canonical_value

Row = Sequence[Any]

_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


def comparable_cell(value: Any) -> Any:
    """A cell as both metrics compare it: the sandbox's canonical value, made hashable."""
    return _hashable(canonical_value(value))


def _hashable(value: Any) -> Any:
    if isinstance(value, list):  # DuckDB LIST / STRUCT values after canonicalisation
        return tuple(_hashable(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((key, _hashable(item)) for key, item in value.items()))
    return value


def _comparable_rows(rows: Sequence[Row]) -> list[tuple[Any, ...]]:
    return [tuple(comparable_cell(cell) for cell in row) for row in rows]


def ex_bird(pred: ExecutionResult, gold: ExecutionResult) -> bool:
    """BIRD execution accuracy: both ran, complete, and their sets of rows are equal.

    A truncated result (more rows than the sandbox's row cap) cannot be compared and is wrong.
    """
    if not (pred.ok and gold.ok) or pred.truncated or gold.truncated:
        return False
    return set(_comparable_rows(pred.rows)) == set(_comparable_rows(gold.rows))


def order_matters(gold_sql: str) -> bool:
    """Spider test-suite rule: row order is compared iff the gold SQL says ORDER BY anywhere.

    (The official check is ``'order by' in gold.lower()``; this one also accepts any whitespace
    between the two words.)
    """
    return _ORDER_BY.search(gold_sql) is not None


def ex_spider(pred_rows: Sequence[Row], gold_rows: Sequence[Row], order_matters: bool) -> bool:
    """Spider test-suite denotation equality on one database.

    True iff some permutation of the predicted columns makes the predicted rows equal to the
    gold rows as a bag (duplicates count), or as a list when ``order_matters``. Two empty
    results are equal whatever their columns.
    """
    pred, gold = _comparable_rows(pred_rows), _comparable_rows(gold_rows)
    if not pred and not gold:
        return True
    if len(pred) != len(gold):
        return False
    width = len(gold[0])
    if any(len(row) != width for row in pred):
        return False
    # Cheap necessary condition: a column permutation leaves each row's sorted cells unchanged.
    pred_unordered = [_sorted_cells(row) for row in pred]
    gold_unordered = [_sorted_cells(row) for row in gold]
    if order_matters:
        if pred_unordered != gold_unordered:
            return False
    elif Counter(pred_unordered) != Counter(gold_unordered):
        return False

    gold_bag = Counter(gold)
    for perm in _column_permutations(pred, gold, order_matters):
        permuted = [tuple(row[j] for j in perm) for row in pred]
        equal = permuted == gold if order_matters else Counter(permuted) == gold_bag
        if equal:
            return True
    return False


def _cell_key(value: Any) -> tuple[int, Any]:
    """A total order over canonical cells that agrees with their equality."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (2, 0) if math.isnan(value) else (1, value)  # NaN after all numbers
    if isinstance(value, str):
        return (3, value)
    return (4, repr(value))


def _sorted_cells(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(sorted(row, key=_cell_key))


def _column_permutations(
    pred: list[tuple[Any, ...]], gold: list[tuple[Any, ...]], order_matters: bool
) -> Iterator[tuple[int, ...]]:
    """Column maps gold column i ← pred column perm[i] that could make the results equal.

    A pred column can stand for a gold column only if it holds the same values: the same
    sequence when order matters, else the same bag. (The official code prunes with 20 sampled
    rows; this pruning is exact, so the answer is the same and deterministic.)
    """
    width = len(gold[0])

    def column(rows: list[tuple[Any, ...]], i: int) -> Any:
        values = [row[i] for row in rows]
        return tuple(values) if order_matters else Counter(values)

    pred_columns = [column(pred, j) for j in range(width)]
    candidates = [
        [j for j in range(width) if pred_columns[j] == column(gold, i)] for i in range(width)
    ]

    def extend(prefix: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if len(prefix) == width:
            yield prefix
            return
        for j in candidates[len(prefix)]:
            if j not in prefix:
                yield from extend(prefix + (j,))

    yield from extend(())
