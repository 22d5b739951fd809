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

from pipelines.agents.base import SQLRewriter, WrittenSQLInput
from pipelines.agents.render import clip
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import FixAttempt


class FixInput(WrittenSQLInput):
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


class SQLFixer(SQLRewriter[FixInput]):
    """``(sql, rationale)`` of the repaired query (not yet executed)."""

    agent_name = "l2.sql_fixer"
    role = "fixer"
    prompt_name = "sql_fixer"
    surface = "operational"

    def values(self, inp: FixInput) -> dict[str, object]:
        return {
            **inp.prompt_values(),
            "error": clip(inp.error, 300),
            "earlier": earlier_block(inp.earlier),
        }

    async def fix(self, inp: FixInput, runtime: AgentRuntime) -> tuple[str, str]:
        return await self.run(inp, runtime)
