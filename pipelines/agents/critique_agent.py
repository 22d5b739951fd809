"""CritiqueAgent: a typed Critique of one bucket's representative, contrasted with the other
generators' answers and rationales. It never decides the retry threshold: the orchestrator does.

    >>> from pipelines.settings import AgentCall
    >>> critic = CritiqueAgent(settings=AgentCall(temperature=0.2, max_tokens=384))

With a model behind ``runtime``:

    await critic.critique(CritiqueInput(..., bucket_hash="ab12", others="..."), runtime)
    ──► Critique(bucket_hash='ab12', error_class=<ErrorClass.missing_filter>, complexity=3,
                 verdict='edit', ...)
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.types import Frozen
from pipelines.agents.base import PromptAgent, SchemaQuestionInput, parse_json
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Critique
from pipelines.contracts import ErrorClass

NO_ERROR = "none"

CRITIQUE_SCHEMA = {
    "type": "object",
    "properties": {
        "error_class": {"type": "string", "enum": [e.value for e in ErrorClass] + [NO_ERROR]},
        "suggested_fix": {"type": "string"},
        "generator_feedback": {"type": "string"},
        "feedback_kind": {"type": "string", "enum": ["correction", "warning"]},
        "complexity": {"type": "integer", "enum": list(range(1, 11))},
        "verdict": {"type": "string", "enum": ["accept", "edit", "retry"]},
    },
    "required": [
        "error_class",
        "suggested_fix",
        "generator_feedback",
        "feedback_kind",
        "complexity",
        "verdict",
    ],
    "additionalProperties": False,
}


class _CritiqueReply(Frozen):
    error_class: ErrorClass | Literal["none"]
    suggested_fix: str = ""
    generator_feedback: str = ""
    feedback_kind: Literal["correction", "warning"] = "warning"
    complexity: int = Field(ge=1, le=10)
    verdict: Literal["accept", "edit", "retry"]


class CritiqueInput(SchemaQuestionInput):
    bucket_hash: str
    sql: str
    rationale: str
    preview: str
    size: int  # candidates in this bucket
    total: int  # candidates in the pool
    others: str  # the other buckets: producer, SQL, rationale, result


class CritiqueAgent(PromptAgent[CritiqueInput, Critique]):
    agent_name = "l2.critique_agent"
    role = "critic"
    prompt_name = "critique"
    json_schema = CRITIQUE_SCHEMA

    def values(self, inp: CritiqueInput) -> dict[str, object]:
        return {
            **inp.prompt_values(),
            "sql": inp.sql,
            "rationale": inp.rationale or "(none given)",
            "preview": inp.preview,
            "size": inp.size,
            "total": inp.total,
            "others": inp.others or "(no other answers)",
        }

    def parse(self, text: str, inp: CritiqueInput) -> Critique:
        reply = parse_json(text, _CritiqueReply, "critic reply is not a Critique")
        return Critique(
            bucket_hash=inp.bucket_hash,
            error_class=None if reply.error_class == NO_ERROR else ErrorClass(reply.error_class),
            complexity=reply.complexity,
            verdict=reply.verdict,
            suggested_fix=reply.suggested_fix.strip(),
            generator_feedback=reply.generator_feedback.strip(),
            feedback_kind=reply.feedback_kind,
        )

    async def critique(self, inp: CritiqueInput, runtime: AgentRuntime) -> Critique:
        return await self.run(inp, runtime)
