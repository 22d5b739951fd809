"""The response agent: a short explanation of an answer, grounded on its SQL and its result.

    question, SQL, result ──► model (pipelines/prompts/explain_answer.md, JSON)
        every number in it appears in the result, the SQL or the question ──► the model's words
        otherwise, or the model failed ──► template_explanation(sql, result): built from the SQL

A number the explanation states but the result, the SQL and the question do not hold is never
passed on: the template (which only quotes the result and the SQL) is used instead.

    >>> from pipelines.contracts import ExecutionResult
    >>> result = ExecutionResult(rows=((2,),), columns=("count",), row_count=1, hash="h")
    >>> text, assumptions = template_explanation(
    ...     "SELECT COUNT(*) FROM singer WHERE country = 'France'", result)
    >>> text
    "The answer is 2. It counts rows of singer, keeping rows where country = 'France'."
    >>> grounded("There are 2 French singers.", "SELECT COUNT(*) FROM singer", result)
    True
    >>> grounded("There are 3 French singers.", "SELECT COUNT(*) FROM singer", result)
    False
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any, Literal

import sqlglot
from sqlglot import exp

from core.types import Frozen, Usage
from models.types import ChatRequest
from pipelines.agents.render import DIALECT_NAME
from pipelines.contracts import Dialect, ExecutionResult
from pipelines.prompts import load_prompt

log = logging.getLogger(__name__)

PROMPT = "explain_answer"
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_SCHEMA = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "assumptions": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["explanation", "assumptions"],
}
_VERBS = {
    exp.Count: "counts",
    exp.Sum: "sums",
    exp.Avg: "averages",
    exp.Min: "takes the minimum of",
    exp.Max: "takes the maximum of",
}


class Answered(Frozen):
    """An answer to explain: the question (with its evidence), the SQL chosen and its result."""

    question: str
    sql: str
    result: ExecutionResult
    evidence: str = ""
    dialect: Dialect = "sqlite"


class Explanation(Frozen):
    text: str
    assumptions: tuple[str, ...] = ()
    source: Literal["model", "template"] = "template"
    fallback_reason: str = ""  # why the template was used, when the model was asked
    usage: Usage = Usage()


# --- numbers ------------------------------------------------------------------------------


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text`` (``1,234.5`` is one number)."""
    return [m.group().rstrip(",") for m in _NUMBER.finditer(text)]


def _value(number: str) -> float | None:
    try:
        return float(number.replace(",", ""))
    except ValueError:
        return None


def _allowed(sources: Iterable[Any]) -> set[float]:
    values: set[float] = set()
    for source in sources:
        if isinstance(source, bool) or source is None:
            continue
        if isinstance(source, (int, float)):
            values.add(float(source))
            continue
        values |= {v for v in map(_value, numbers_in(str(source))) if v is not None}
    return values


def grounded(
    text: str, sql: str, result: ExecutionResult, *, question: str = "", extra: Iterable = ()
) -> bool:
    """Whether every number in ``text`` is a value of ``result``, or written in the SQL or the
    question, rounded to the digits written (``3.14`` for ``3.14159``)."""
    cells = [v for row in result.rows for v in row]
    allowed = _allowed([*cells, sql, question, result.row_count, len(result.columns), *extra])
    for number in numbers_in(text):
        value = _value(number)
        if value is None:
            return False
        decimals = len(number.split(".", 1)[1]) if "." in number else 0
        half_unit = 0.5 * 10**-decimals  # 41 stands for 40.5, 3.14 for 3.14159
        if not any(abs(a - value) <= half_unit for a in allowed):
            return False
    return True


# --- the template -------------------------------------------------------------------------


def _answer_sentence(result: ExecutionResult) -> str:
    if not result.ok:
        return "The query failed."
    if result.row_count == 0:
        return "No rows match."
    if result.row_count == 1 and len(result.columns) == 1:
        return f"The answer is {result.rows[0][0]}."
    more = " (the result was cut at the row cap)" if result.truncated else ""
    return f"The result has {result.row_count} rows{more}."


def template_explanation(
    sql: str, result: ExecutionResult, dialect: str = "sqlite"
) -> tuple[str, tuple[str, ...]]:
    """``(explanation, assumptions)`` read off the SQL: what it aggregates over which tables,
    its filters, grouping, order and limit. Quotes only the result and the SQL."""
    answer = _answer_sentence(result)
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError:
        return answer, ()
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return answer, ()
    tables = sorted({t.name for t in tree.find_all(exp.Table)})
    verb = next((word for kind, word in _VERBS.items() if select.find(kind) is not None), "lists")
    what = "rows of" if verb in ("counts", "lists") else "values from"
    parts = [f"It {verb} {what} {', '.join(tables) or 'the database'}"]
    where = select.args.get("where")
    if where is not None:
        parts.append(f"keeping rows where {where.this.sql(dialect=dialect)}")
    group = select.args.get("group")
    if group is not None:
        parts.append(f"per {', '.join(e.sql(dialect=dialect) for e in group.expressions)}")
    order = select.args.get("order")
    if order is not None:
        parts.append(f"ordered by {', '.join(e.sql(dialect=dialect) for e in order.expressions)}")
    limit = select.args.get("limit")
    if limit is not None and limit.expression is not None:
        parts.append(f"keeping the first {limit.expression.sql(dialect=dialect)}")
    assumptions: list[str] = []
    if where is not None:
        for condition in _conjuncts(where.this):
            assumptions.append(f"The question's condition is read as {condition.sql(dialect)}.")
    for join in select.args.get("joins") or ():
        on = join.args.get("on")
        if on is not None:
            assumptions.append(f"{join.this.sql(dialect)} is joined on {on.sql(dialect)}.")
    return f"{answer} {', '.join(parts)}.", tuple(assumptions)


def _conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    if isinstance(condition, exp.And):
        return _conjuncts(condition.left) + _conjuncts(condition.right)
    return [condition]


# --- the agent ----------------------------------------------------------------------------


def _rows_text(result: ExecutionResult, shown: int) -> str:
    lines = [
        " | ".join("NULL" if v is None else str(v) for v in row) for row in result.rows[:shown]
    ]
    if result.row_count > shown:
        lines.append(f"... ({result.row_count - shown} more rows)")
    return "\n".join(lines) or "(no rows)"


class ResponseAgent:
    """Asks the model for the explanation and keeps it only when it is grounded.

    ``await ResponseAgent(client).explain(Answered(question=..., sql=..., result=...))``
    """

    def __init__(
        self, client: Any, *, role: str = "critic", max_tokens: int = 256, rows_shown: int = 10
    ) -> None:
        self.client, self.role = client, role
        self.max_tokens, self.rows_shown = max_tokens, rows_shown
        self.prompt = load_prompt(PROMPT)

    def request(self, answered: Answered) -> ChatRequest:
        result = answered.result
        messages = self.prompt.render(
            question=answered.question,
            evidence=f"Evidence: {answered.evidence}" if answered.evidence else "",
            dialect=DIALECT_NAME.get(answered.dialect, "SQLite"),
            sql=answered.sql,
            row_count=result.row_count,
            columns=", ".join(result.columns),
            rows=_rows_text(result, self.rows_shown),
        )
        return ChatRequest(
            messages=messages, max_tokens=self.max_tokens, temperature=0.0, json_schema=_SCHEMA
        )

    async def explain(self, answered: Answered) -> Explanation:
        sql, result = answered.sql, answered.result
        text, assumptions = template_explanation(sql, result, answered.dialect)
        if not result.ok:
            return Explanation(text=text, assumptions=assumptions)
        request = self.request(answered)
        usage = Usage()
        try:
            response = await self.client.chat(request, role=self.role)
            usage = response.usage
            data = json.loads(response.texts[0])
            said = str(data["explanation"]).strip()
            said_assumptions = tuple(str(a).strip() for a in data.get("assumptions") or () if a)
        except Exception as exc:  # any failure of the model: the template answers
            log.info("response agent fell back to the template: %s", type(exc).__name__)
            return Explanation(
                text=text,
                assumptions=assumptions,
                fallback_reason=f"model_failed:{type(exc).__name__}",
                usage=usage,
            )
        checked = [said, *said_assumptions]
        if not said or not all(
            grounded(t, sql, result, question=f"{answered.question} {answered.evidence}")
            for t in checked
        ):
            return Explanation(
                text=text, assumptions=assumptions, fallback_reason="ungrounded", usage=usage
            )
        return Explanation(text=said, assumptions=said_assumptions, source="model", usage=usage)
