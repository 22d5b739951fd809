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
:func:`pipelines.sql_hardness.hardness_from_sql`, a sqlglot reading of the same counts. It
agrees with the official label on all 1,034 Spider dev questions (a loader test checks this),
but it is a reimplementation, not the official parser.
"""

from __future__ import annotations

from typing import Any

from pipelines.sql_hardness import Hardness, classify

_LIKE_OP = 9  # process_sql.WHERE_OPS.index("like")


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
