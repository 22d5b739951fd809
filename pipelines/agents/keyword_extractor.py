"""KeywordSkeletonExtractor (L1): literals and a question skeleton, JSON-constrained, low temperature.

    >>> extractor = KeywordSkeletonExtractor(settings=AgentCall(temperature=0.2, max_tokens=256))

With a model behind ``runtime``:

    await extractor.extract("How many singers are from France?", "", runtime)
    ──► Understanding(literals=('France',), skeleton='How many [COL] are from _?',
                      keywords=('singers',))
"""

from __future__ import annotations

from pydantic import ValidationError

from models.types import ChatRequest
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.render import evidence_line
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Understanding
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.settings import AgentCall

# Bounded lengths: the constrained grammar then cannot loop (the 1.5B once wrote a skeleton of
# "AND [COLn] = _" clauses until max_tokens cut the JSON off, losing the whole extraction).
UNDERSTANDING_SCHEMA = {
    "type": "object",
    "properties": {
        "literals": {"type": "array", "items": {"type": "string", "maxLength": 80}, "maxItems": 8},
        "skeleton": {"type": "string", "maxLength": 240},
        "keywords": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 10},
    },
    "required": ["literals", "skeleton", "keywords"],
    "additionalProperties": False,
}


class KeywordSkeletonExtractor:
    agent_name = "l1.keyword_extractor"

    def __init__(self, *, settings: AgentCall, prompt: PromptTemplate | None = None) -> None:
        self.settings = settings
        self.prompt = prompt or load_prompt("keyword_extractor")

    async def extract(self, question: str, evidence: str, runtime: AgentRuntime) -> Understanding:
        request = ChatRequest(
            messages=self.prompt.render(question=question, evidence=evidence_line(evidence)),
            temperature=self.settings.temperature or 0.0,
            max_tokens=self.settings.max_tokens,
            json_schema=UNDERSTANDING_SCHEMA,
        )
        response = await runtime.chat(request, role="extractor", agent=self.agent_name)
        try:
            raw = Understanding.model_validate_json(response.texts[0])
        except ValidationError as exc:
            raise AgentOutputError(
                f"extractor reply is not an Understanding: {exc.errors()[0]['msg']}"
            ) from exc
        # Keep only literals that really occur in the question or evidence: the SQL must match them.
        source = f"{question} {evidence}".lower()
        literals = tuple(
            dict.fromkeys(
                x.strip() for x in raw.literals if x.strip() and x.strip().lower() in source
            )
        )
        keywords = tuple(dict.fromkeys(x.strip() for x in raw.keywords if x.strip()))
        return Understanding(literals=literals, skeleton=raw.skeleton.strip(), keywords=keywords)
