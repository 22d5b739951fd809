"""Spider hardness (easy / medium / hard / extra) of a SQL query, counted on a sqlglot parse.

Spider's ``evaluation.py`` (``Evaluator.eval_hardness``) classifies a query by three counts
over its parse:

- component1: WHERE, GROUP BY, ORDER BY, LIMIT present (1 each), joined tables beyond the
  first, ORs and LIKEs in the FROM/WHERE/HAVING conditions;
- component2: nested queries in those conditions plus INTERSECT / UNION / EXCEPT;
- others: more than one aggregate, more than one SELECT column, more than one WHERE
  condition, more than one GROUP BY column (1 each).

:func:`hardness_from_sql` reads those counts from the SQL text. It labels the benchmark's gold
queries where a file carries no official parse (``eval/loaders/spider.py``; it agrees with the
official label on all 1,034 Spider dev questions) and rates a candidate's SQL where the adaptive
pipeline decides whether a first-wave majority may answer (``stop_max_hardness``).

    >>> hardness_from_sql("SELECT count(*) FROM singer")
    'easy'
    >>> hardness_from_sql("SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)")
    'hard'
"""

from __future__ import annotations

from typing import Literal

import sqlglot
from sqlglot import exp

Hardness = Literal["easy", "medium", "hard", "extra"]
HARDNESS: tuple[Hardness, ...] = ("easy", "medium", "hard", "extra")  # easiest first


def classify(component1: int, component2: int, others: int) -> Hardness:
    """Spider's decision table over the three counts."""
    if component1 <= 1 and others == 0 and component2 == 0:
        return "easy"
    if (others <= 2 and component1 <= 1 and component2 == 0) or (
        component1 <= 2 and others < 2 and component2 == 0
    ):
        return "medium"
    if (
        (others > 2 and component1 <= 2 and component2 == 0)
        or (2 < component1 <= 3 and others <= 2 and component2 == 0)
        or (component1 <= 1 and others == 0 and component2 <= 1)
    ):
        return "hard"
    return "extra"


_AGGREGATES = (exp.Max, exp.Min, exp.Count, exp.Sum, exp.Avg)
_SET_OPS = (exp.Union, exp.Intersect, exp.Except)


def hardness_from_sql(sql: str) -> Hardness:
    """Spider hardness counted on a sqlglot parse of the SQL text (SQLite dialect)."""
    tree = sqlglot.parse_one(sql, read="sqlite")
    return classify(*_counts(tree))


def _counts(tree: exp.Expression) -> tuple[int, int, int]:
    """(component1, component2, others) of a query.

    Spider parses ``A UNION B EXCEPT C`` right-nested (A with ``union = B EXCEPT C``), so a
    chain of set operations counts its leftmost query plus one nested query.
    """
    if isinstance(tree, _SET_OPS):
        first = tree.left
        while isinstance(first, _SET_OPS):
            first = first.left
        c1, c2, others = _counts(first)
        return c1, c2 + 1, others
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return 0, 0, 0
    where, having = select.args.get("where"), select.args.get("having")
    group, order = select.args.get("group"), select.args.get("order")
    joins = select.args.get("joins") or []
    conditions = [node.this for node in (where, having) if node is not None]
    conditions += [join.args["on"] for join in joins if join.args.get("on") is not None]

    component1 = sum(node is not None for node in (where, group, order, select.args.get("limit")))
    component1 += len(joins)
    component1 += sum(len(list(_own_nodes(cond, exp.Or))) for cond in conditions)
    component1 += sum(len(list(_own_nodes(cond, exp.Like))) for cond in conditions)

    component2 = sum(
        1 for cond in conditions for node in _own_nodes(cond, exp.Subquery, exp.Select)
    )

    where_units = _condition_units(where.this) if where is not None else []
    having_units = _condition_units(having.this) if having is not None else []
    group_columns = group.expressions if group is not None else []
    # Official quirk: in WHERE and HAVING, has_agg() reads a condition's NOT flag, not its
    # aggregate; and every AND/OR between HAVING conditions counts as one aggregate.
    aggs = sum(_is_aggregate(e) for e in select.expressions)
    aggs += sum(isinstance(u, exp.Not) for u in where_units + having_units)
    aggs += max(len(having_units) - 1, 0)
    aggs += sum(_is_aggregate(e) for e in group_columns)
    if order is not None:
        aggs += sum(_is_aggregate(o.this) for o in order.expressions)
    others = (
        (aggs > 1)
        + (len(select.expressions) > 1)
        + (len(where_units) > 1)
        + (len(group_columns) > 1)
    )
    return component1, component2, others


def _own_nodes(node: exp.Expression, *kinds: type[exp.Expression]):
    """Nodes of the given kinds in ``node``, not descending into nested queries."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, kinds):
            yield current
        if current is not node and isinstance(current, (exp.Subquery, exp.Select)):
            continue
        stack.extend(current.iter_expressions())


def _condition_units(condition: exp.Expression) -> list[exp.Expression]:
    """The AND/OR-separated predicates of a condition, left to right."""
    if isinstance(condition, exp.Paren):
        return _condition_units(condition.this)
    if isinstance(condition, (exp.And, exp.Or)):
        return _condition_units(condition.left) + _condition_units(condition.right)
    return [condition]


def _is_aggregate(node: exp.Expression) -> bool:
    """Official has_agg on a SELECT / GROUP BY / ORDER BY unit: an aggregate at its head."""
    while isinstance(node, (exp.Paren, exp.Alias, exp.Distinct)):
        node = node.this
    if isinstance(node, exp.Binary) and not isinstance(node, (exp.And, exp.Or)):
        # a comparison or arithmetic unit: its left operand carries the aggregate
        return isinstance(_unwrap(node.left), _AGGREGATES)
    return isinstance(node, _AGGREGATES)


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, (exp.Paren, exp.Alias)):
        node = node.this
    if isinstance(node, exp.Binary):
        return _unwrap(node.left)
    return node
