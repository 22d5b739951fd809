"""SQLRevisor: applies a Critique to a bucket representative, seeing what other buckets answered.

    >>> from pipelines.settings import AgentCall
    >>> revisor = SQLRevisor(settings=AgentCall(temperature=0.0, max_tokens=512))

With a model behind ``runtime``:

    await revisor.revise(RevisionInput(..., critique=critique, others="..."), runtime)
    ──► ("SELECT ... WHERE country = 'France'", '- add the missing country filter')
"""

from __future__ import annotations

from core.types import Frozen
from pipelines.agents.base import END_OF_SQL_BLOCK, SQL_BLOCK_GRAMMAR, PromptAgent, parse_sql_reply
from pipelines.agents.render import DIALECT_NAME, evidence_line
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Critique
from pipelines.contracts import Dialect


class RevisionInput(Frozen):
    question: str
    evidence: str = ""
    dialect: Dialect = "sqlite"
    schema_text: str
    sql: str
    preview: str
    critique: Critique
    others: str  # cross-bucket summary: what the other generators answered


class SQLRevisor(PromptAgent[RevisionInput, tuple[str, str]]):
    """``(sql, rationale)`` of the revised query (not yet executed)."""

    agent_name = "l2.sql_revisor"
    role = "generator"
    prompt_name = "sql_revisor"
    stop = (END_OF_SQL_BLOCK,)
    grammar = SQL_BLOCK_GRAMMAR  # the revised query only: no prose before or after it

    def values(self, inp: RevisionInput) -> dict[str, object]:
        error_class = (
            inp.critique.error_class.value if inp.critique.error_class else "possible problem"
        )
        return {
            "dialect": DIALECT_NAME[inp.dialect],
            "schema": inp.schema_text,
            "question": inp.question,
            "evidence": evidence_line(inp.evidence),
            "sql": inp.sql,
            "preview": inp.preview,
            "error_class": error_class.replace("_", " "),
            "suggested_fix": inp.critique.suggested_fix,
            "others": inp.others or "(no other answers)",
        }

    def parse(self, text: str, inp: RevisionInput) -> tuple[str, str]:
        return parse_sql_reply(text)

    async def revise(self, inp: RevisionInput, runtime: AgentRuntime) -> tuple[str, str]:
        return await self.run(inp, runtime)
