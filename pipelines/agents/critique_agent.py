"""CritiqueAgent: a typed Critique of one bucket's representative, contrasted with the other
generators' answers and rationales. It never decides the retry threshold: the orchestrator does.

    >>> critic = CritiqueAgent(settings=AgentCall(temperature=0.2, max_tokens=384))

With a model behind ``runtime``:

    await critic.critique(CritiqueInput(..., bucket_hash="ab12", others="..."), runtime)
    ──► Critique(bucket_hash='ab12', error_class=<ErrorClass.missing_filter>, complexity=3,
                 verdict='edit', ...)
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError

from core.types import Frozen
from models.types import ChatRequest
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.render import evidence_line
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Critique
from pipelines.contracts import ErrorClass
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.settings import AgentCall

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


class CritiqueInput(Frozen):
    question: str
    evidence: str = ""
    schema_text: str
    bucket_hash: str
    sql: str
    rationale: str
    preview: str
    size: int  # candidates in this bucket
    total: int  # candidates in the pool
    others: str  # the other buckets: producer, SQL, rationale, result


class CritiqueAgent:
    agent_name = "l2.critique_agent"

    def __init__(self, *, settings: AgentCall, prompt: PromptTemplate | None = None) -> None:
        self.settings = settings
        self.prompt = prompt or load_prompt("critique")

    async def critique(self, inp: CritiqueInput, runtime: AgentRuntime) -> Critique:
        request = ChatRequest(
            messages=self.prompt.render(
                schema=inp.schema_text,
                question=inp.question,
                evidence=evidence_line(inp.evidence),
                sql=inp.sql,
                rationale=inp.rationale or "(none given)",
                preview=inp.preview,
                size=inp.size,
                total=inp.total,
                others=inp.others or "(no other answers)",
            ),
            temperature=self.settings.temperature or 0.0,
            max_tokens=self.settings.max_tokens,
            json_schema=CRITIQUE_SCHEMA,
        )
        response = await runtime.chat(request, role="critic", agent=self.agent_name)
        try:
            reply = _CritiqueReply.model_validate_json(response.texts[0])
        except ValidationError as exc:
            raise AgentOutputError(
                f"critic reply is not a Critique: {exc.errors()[0]['msg']}"
            ) from exc
        return Critique(
            bucket_hash=inp.bucket_hash,
            error_class=None if reply.error_class == NO_ERROR else ErrorClass(reply.error_class),
            complexity=reply.complexity,
            verdict=reply.verdict,
            suggested_fix=reply.suggested_fix.strip(),
            generator_feedback=reply.generator_feedback.strip(),
            feedback_kind=reply.feedback_kind,
        )
