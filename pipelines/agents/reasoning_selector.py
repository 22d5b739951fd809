"""ReasoningSelector (L3): which of two candidates better answers the question.

It sees the question, the light schema, both SQL strings and both result previews.

    >>> selector = ReasoningSelector(settings=AgentCall(temperature=0.0, max_tokens=256))

With a model behind ``runtime``:

    await selector.choose(SelectionInput(..., sql_a=..., sql_b=...), runtime)  ──► 'A'
"""

from __future__ import annotations

from typing import Literal

from pydantic import ValidationError

from core.types import Frozen
from models.types import ChatRequest
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.render import evidence_line
from pipelines.agents.runtime import AgentRuntime
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.settings import AgentCall

SELECTION_SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "winner": {"type": "string", "enum": ["A", "B"]}},
    "required": ["reason", "winner"],
    "additionalProperties": False,
}


class _SelectionReply(Frozen):
    reason: str = ""
    winner: Literal["A", "B"]


class SelectionInput(Frozen):
    question: str
    evidence: str = ""
    schema_text: str
    sql_a: str
    preview_a: str
    sql_b: str
    preview_b: str


class ReasoningSelector:
    agent_name = "l3.reasoning_selector"

    def __init__(self, *, settings: AgentCall, prompt: PromptTemplate | None = None) -> None:
        self.settings = settings
        self.prompt = prompt or load_prompt("reasoning_selector")

    async def choose(self, inp: SelectionInput, runtime: AgentRuntime) -> Literal["A", "B"]:
        request = ChatRequest(
            messages=self.prompt.render(
                schema=inp.schema_text,
                question=inp.question,
                evidence=evidence_line(inp.evidence),
                sql_a=inp.sql_a,
                preview_a=inp.preview_a,
                sql_b=inp.sql_b,
                preview_b=inp.preview_b,
            ),
            temperature=self.settings.temperature or 0.0,
            max_tokens=self.settings.max_tokens,
            json_schema=SELECTION_SCHEMA,
        )
        response = await runtime.chat(request, role="selector", agent=self.agent_name)
        try:
            return _SelectionReply.model_validate_json(response.texts[0]).winner
        except ValidationError as exc:
            raise AgentOutputError(
                f"selector reply has no winner: {exc.errors()[0]['msg']}"
            ) from exc
