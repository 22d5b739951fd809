"""Spider hardness (easy / medium / hard / extra) of a gold query, as Spider's evaluation counts it.

Spider's ``evaluation.py`` (``Evaluator.eval_hardness``) classifies a query by three counts
over its parse (``process_sql.get_sql``):

- component1: WHERE, GROUP BY, ORDER BY, LIMIT present (1 each), joined tables beyond the
  first, ORs and LIKEs in the FROM/WHERE/HAVING conditions;
- component2: nested queries in those conditions plus INTERSECT / UNION / EXCEPT;
- others: more than one aggregate, more than one SELECT column, more than one WHERE
  condition, more than one GROUP BY column (1 each).

Spider's ``dev.json`` ships that parse in each question's ``sql`` field, so
:func:`hardness_from_parse` applies the official rules to it, reproducing the official label
(including its quirks: the AND/OR tokens in HAVING and a NOT flag in a WHERE condition count as
aggregates). Files without the parse (``train_spider.json`` here) go through
:func:`hardness_from_sql`, a sqlglot reading of the same counts. It agrees with the official
label on all 1,034 Spider dev questions (a loader test checks this), but it is a
reimplementation, not the official parser.
"""

from __future__ import annotations

from typing import Any, Literal

import sqlglot
from sqlglot import exp

Hardness = Literal["easy", "medium", "hard", "extra"]

_LIKE_OP = 9  # process_sql.WHERE_OPS.index("like")


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


# --- the official parse (dev.json "sql") -----------------------------------------------------


def hardness_from_parse(sql: dict[str, Any]) -> Hardness:
    """Official hardness from a ``process_sql`` parse (the ``sql`` field of Spider's JSON)."""
    return classify(_parse_component1(sql), _parse_component2(sql), _parse_others(sql))


def _conditions(sql: dict[str, Any]) -> list[Any]:
    return sql["from"]["conds"] + sql["where"] + sql["having"]


def _cond_units(sql: dict[str, Any]) -> list[Any]:
    return sql["from"]["conds"][::2] + sql["where"][::2] + sql["having"][::2]


def _parse_component1(sql: dict[str, Any]) -> int:
    count = sum(1 for key in ("where", "groupBy", "orderBy") if sql[key])
    count += sql["limit"] is not None
    count += max(len(sql["from"]["table_units"]) - 1, 0)
    connectors = sql["from"]["conds"][1::2] + sql["where"][1::2] + sql["having"][1::2]
    count += connectors.count("or")
    count += sum(1 for unit in _cond_units(sql) if unit[1] == _LIKE_OP)
    return count


def _parse_component2(sql: dict[str, Any]) -> int:
    nested = sum(1 for unit in _cond_units(sql) for value in unit[3:5] if isinstance(value, dict))
    return nested + sum(1 for key in ("intersect", "except", "union") if sql[key] is not None)


def _has_agg(unit: Any) -> bool:
    # Official ``has_agg``: first element differs from AGG_OPS.index("none") == 0. On a
    # condition unit that element is its NOT flag, and the "and"/"or" strings between HAVING
    # conditions count too (quirks kept on purpose).
    return unit[0] != 0


def _parse_others(sql: dict[str, Any]) -> int:
    aggs = sum(_has_agg(unit) for unit in sql["select"][1])
    aggs += sum(_has_agg(unit) for unit in sql["where"][::2])
    aggs += sum(_has_agg(unit) for unit in sql["groupBy"])
    if sql["orderBy"]:
        order_units = [u[1] for u in sql["orderBy"][1] if u[1]] + [
            u[2] for u in sql["orderBy"][1] if u[2]
        ]
        aggs += sum(_has_agg(unit) for unit in order_units)
    aggs += sum(_has_agg(unit) for unit in sql["having"])
    return (
        (aggs > 1)
        + (len(sql["select"][1]) > 1)
        + (len(sql["where"]) > 1)
        + (len(sql["groupBy"]) > 1)
    )


# --- sqlglot approximation (no parse available) ----------------------------------------------

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
