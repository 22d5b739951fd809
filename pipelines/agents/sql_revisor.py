"""SQLRevisor: applies a Critique to a bucket representative, seeing what other buckets answered.

    >>> from pipelines.settings import AgentCall
    >>> revisor = SQLRevisor(settings=AgentCall(temperature=0.0, max_tokens=512))

With a model behind ``runtime``:

    await revisor.revise(RevisionInput(..., critique=critique, others="..."), runtime)
    ──► ("SELECT ... WHERE country = 'France'", '- add the missing country filter')
"""

from __future__ import annotations

from pipelines.agents.base import SQLRewriter, WrittenSQLInput
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Critique


class RevisionInput(WrittenSQLInput):
    preview: str
    critique: Critique
    others: str  # cross-bucket summary: what the other generators answered


class SQLRevisor(SQLRewriter[RevisionInput]):
    """``(sql, rationale)`` of the revised query (not yet executed)."""

    agent_name = "l2.sql_revisor"
    role = "generator"
    prompt_name = "sql_revisor"

    def values(self, inp: RevisionInput) -> dict[str, object]:
        error_class = (
            inp.critique.error_class.value if inp.critique.error_class else "possible problem"
        )
        return {
            **inp.prompt_values(),
            "preview": inp.preview,
            "error_class": error_class.replace("_", " "),
            "suggested_fix": inp.critique.suggested_fix,
            "others": inp.others or "(no other answers)",
        }

    async def revise(self, inp: RevisionInput, runtime: AgentRuntime) -> tuple[str, str]:
        return await self.run(inp, runtime)
