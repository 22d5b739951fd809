"""KeywordSkeletonExtractor (L1): literals and a question skeleton, JSON-constrained, low temperature.

    >>> from pipelines.settings import AgentCall
    >>> extractor = KeywordSkeletonExtractor(settings=AgentCall(temperature=0.2, max_tokens=256))

With a model behind ``runtime``:

    await extractor.extract("How many singers are from France?", "", runtime)
    ──► Understanding(literals=('France',), skeleton='How many [COL] are from _?',
                      keywords=('singers',))
"""

from __future__ import annotations

from pipelines.agents.base import PromptAgent, QuestionInput, parse_json
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Understanding

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


class KeywordSkeletonExtractor(PromptAgent[QuestionInput, Understanding]):
    agent_name = "l1.keyword_extractor"
    role = "extractor"
    prompt_name = "keyword_extractor"
    json_schema = UNDERSTANDING_SCHEMA

    def values(self, inp: QuestionInput) -> dict[str, object]:
        return inp.prompt_values()

    def parse(self, text: str, inp: QuestionInput) -> Understanding:
        raw = parse_json(text, Understanding, "extractor reply is not an Understanding")
        # Keep only literals that really occur in the question or evidence: the SQL must match them.
        source = f"{inp.question} {inp.evidence}".lower()
        literals = tuple(
            dict.fromkeys(
                x.strip() for x in raw.literals if x.strip() and x.strip().lower() in source
            )
        )
        keywords = tuple(dict.fromkeys(x.strip() for x in raw.keywords if x.strip()))
        return Understanding(literals=literals, skeleton=raw.skeleton.strip(), keywords=keywords)

    async def extract(self, question: str, evidence: str, runtime: AgentRuntime) -> Understanding:
        return await self.run(QuestionInput(question=question, evidence=evidence), runtime)
