"""SQLFixer: repairs a query that failed to execute, shown the earlier failed repairs of the same
generator so it does not repeat them.

    >>> from pipelines.settings import AgentCall
    >>> fixer = SQLFixer(settings=AgentCall(temperature=0.0, max_tokens=512))

With a model behind ``runtime``:

    await fixer.fix(FixInput(question=..., schema_text=..., sql="SELECT nme FROM singer",
                             error="no such column: nme"), runtime)
    ──► ('SELECT name FROM singer', '- nme is not a column; the column is name')
"""

from __future__ import annotations

from core.types import Frozen
from pipelines.agents.base import END_OF_SQL_BLOCK, SQL_BLOCK_GRAMMAR, PromptAgent, parse_sql_reply
from pipelines.agents.render import DIALECT_NAME, clip, evidence_line
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import FixAttempt
from pipelines.contracts import Dialect


class FixInput(Frozen):
    question: str
    evidence: str = ""
    dialect: Dialect = "sqlite"
    schema_text: str
    sql: str
    error: str
    earlier: tuple[FixAttempt, ...] = ()  # this generator's earlier repairs (failed ones matter)


def earlier_block(attempts: tuple[FixAttempt, ...]) -> str:
    failed = [a for a in attempts if not a.succeeded and a.sql_after]
    if not failed:
        return ""
    lines = ["These earlier repairs of similar queries still failed; do not repeat them:"]
    lines += [
        f"- {clip(a.sql_after, 300)}  -> error: {clip(a.error_after, 120)}" for a in failed[-3:]
    ]
    return "\n".join(lines)


class SQLFixer(PromptAgent[FixInput, tuple[str, str]]):
    """``(sql, rationale)`` of the repaired query (not yet executed)."""

    agent_name = "l2.sql_fixer"
    role = "fixer"
    prompt_name = "sql_fixer"
    surface = "operational"
    stop = (END_OF_SQL_BLOCK,)
    grammar = SQL_BLOCK_GRAMMAR  # the corrected query only: no prose before or after it

    def values(self, inp: FixInput) -> dict[str, object]:
        return {
            "dialect": DIALECT_NAME[inp.dialect],
            "schema": inp.schema_text,
            "question": inp.question,
            "evidence": evidence_line(inp.evidence),
            "sql": inp.sql,
            "error": clip(inp.error, 300),
            "earlier": earlier_block(inp.earlier),
        }

    def parse(self, text: str, inp: FixInput) -> tuple[str, str]:
        return parse_sql_reply(text)

    async def fix(self, inp: FixInput, runtime: AgentRuntime) -> tuple[str, str]:
        return await self.run(inp, runtime)
