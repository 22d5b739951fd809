"""ReasoningGenerator: reasons in ``<think>`` over the DDL view (no examples), answers in ``<sql>``.

    >>> gen = ReasoningGenerator(settings=AgentCall(max_tokens=1024))

With a model behind ``runtime``:

    inp = GenerationInput(question="How many singers?", schema_text=render_ddl(view))
    await gen.generate(inp, temperatures=(0.2, 0.7), runtime=runtime)
    ──► [CandidateSQL(sql='SELECT count(*) FROM singer', producer='reasoning/T=0.2', ...),
         ...]
"""

from __future__ import annotations

from models.types import ChatMessage
from pipelines.agents.base import GenerationInput, SqlGenerator, parse_tagged_reply
from pipelines.agents.render import DIALECT_NAME, evidence_line
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.settings import AgentCall


class ReasoningGenerator(SqlGenerator):
    family = "reasoning"
    agent_name = "l2.reasoning_generator"
    stop = ("</sql>",)

    def __init__(self, *, settings: AgentCall, prompt: PromptTemplate | None = None) -> None:
        super().__init__(settings=settings)
        self.prompt = prompt or load_prompt("reasoning_generator")

    def messages(self, inp: GenerationInput) -> tuple[ChatMessage, ...]:
        return self.prompt.render(
            dialect=DIALECT_NAME[inp.dialect],
            schema=inp.schema_text,
            lessons=inp.lessons.for_generator(self.family).render(),
            question=inp.question,
            evidence=evidence_line(inp.evidence),
        )

    def parse(self, text: str) -> tuple[str, str]:
        return parse_tagged_reply(text)
