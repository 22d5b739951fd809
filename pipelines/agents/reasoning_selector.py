"""ReasoningSelector (L3): which of two candidates better answers the question.

It sees the question, the light schema, both SQL strings and both result previews.

    >>> from pipelines.settings import AgentCall
    >>> selector = ReasoningSelector(settings=AgentCall(temperature=0.0, max_tokens=256))

With a model behind ``runtime``:

    await selector.choose(SelectionInput(..., sql_a=..., sql_b=...), runtime)  ──► 'A'
"""

from __future__ import annotations

from typing import Literal

from core.types import Frozen
from pipelines.agents.base import PromptAgent, SchemaQuestionInput, parse_json
from pipelines.agents.runtime import AgentRuntime

SELECTION_SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "winner": {"type": "string", "enum": ["A", "B"]}},
    "required": ["reason", "winner"],
    "additionalProperties": False,
}


class _SelectionReply(Frozen):
    reason: str = ""
    winner: Literal["A", "B"]


class SelectionInput(SchemaQuestionInput):
    sql_a: str
    preview_a: str
    sql_b: str
    preview_b: str


class ReasoningSelector(PromptAgent[SelectionInput, Literal["A", "B"]]):
    agent_name = "l3.reasoning_selector"
    role = "selector"
    prompt_name = "reasoning_selector"
    json_schema = SELECTION_SCHEMA

    def values(self, inp: SelectionInput) -> dict[str, object]:
        return {
            **inp.prompt_values(),
            "sql_a": inp.sql_a,
            "preview_a": inp.preview_a,
            "sql_b": inp.sql_b,
            "preview_b": inp.preview_b,
        }

    def parse(self, text: str, inp: SelectionInput) -> Literal["A", "B"]:
        return parse_json(text, _SelectionReply, "selector reply has no winner").winner

    async def choose(self, inp: SelectionInput, runtime: AgentRuntime) -> Literal["A", "B"]:
        return await self.run(inp, runtime)
