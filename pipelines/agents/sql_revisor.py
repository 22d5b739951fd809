"""SQLRevisor: applies a Critique to a bucket representative, seeing what other buckets answered.

    >>> revisor = SQLRevisor(settings=AgentCall(temperature=0.0, max_tokens=512))

With a model behind ``runtime``:

    await revisor.revise(RevisionInput(..., critique=critique, others="..."), runtime)
    ──► ("SELECT ... WHERE country = 'France'", '- add the missing country filter')
"""

from __future__ import annotations

from core.types import Frozen
from models.types import ChatRequest
from pipelines.agents.base import END_OF_SQL_BLOCK, SQL_BLOCK_GRAMMAR, parse_sql_reply
from pipelines.agents.render import DIALECT_NAME, evidence_line
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Critique
from pipelines.contracts import Dialect
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.settings import AgentCall


class RevisionInput(Frozen):
    question: str
    evidence: str = ""
    dialect: Dialect = "sqlite"
    schema_text: str
    sql: str
    preview: str
    critique: Critique
    others: str  # cross-bucket summary: what the other generators answered


class SQLRevisor:
    agent_name = "l2.sql_revisor"

    def __init__(self, *, settings: AgentCall, prompt: PromptTemplate | None = None) -> None:
        self.settings = settings
        self.prompt = prompt or load_prompt("sql_revisor")

    async def revise(self, inp: RevisionInput, runtime: AgentRuntime) -> tuple[str, str]:
        error_class = (
            inp.critique.error_class.value if inp.critique.error_class else "possible problem"
        )
        request = ChatRequest(
            messages=self.prompt.render(
                dialect=DIALECT_NAME[inp.dialect],
                schema=inp.schema_text,
                question=inp.question,
                evidence=evidence_line(inp.evidence),
                sql=inp.sql,
                preview=inp.preview,
                error_class=error_class.replace("_", " "),
                suggested_fix=inp.critique.suggested_fix,
                others=inp.others or "(no other answers)",
            ),
            temperature=self.settings.temperature or 0.0,
            max_tokens=self.settings.max_tokens,
            stop=(END_OF_SQL_BLOCK,),
            grammar=SQL_BLOCK_GRAMMAR,  # the revised query only: no prose before or after it
            grammar_optional=True,
        )
        response = await runtime.chat(request, role="generator", agent=self.agent_name)
        return parse_sql_reply(response.texts[0])
