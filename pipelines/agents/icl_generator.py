"""ICLGenerator: the light schema view + retrieved examples + matching cell values, under one of
three prompting strategies (``pipelines/agents/icl/``: direct, cot, decompose).

    >>> from pipelines.agents.icl import COT
    >>> gen = ICLGenerator(strategy=COT, settings=AgentCall(max_tokens=768))

With a model behind ``runtime``:

    inp = GenerationInput(question=..., schema_text=render_light(view), examples=hits)
    await gen.generate(inp, temperatures=(0.7, 1.0), runtime=runtime)
    ──► [CandidateSQL(sql=..., producer='icl/cot/T=0.7', rationale='- the singers table ...'),
         ...]
"""

from __future__ import annotations

from models.types import ChatMessage
from pipelines.agents.base import END_OF_SQL_BLOCK, GenerationInput, SqlGenerator
from pipelines.agents.icl import IclStrategy
from pipelines.agents.render import DIALECT_NAME, cells_block, evidence_line, examples_block
from pipelines.settings import AgentCall


class ICLGenerator(SqlGenerator):
    stop = (END_OF_SQL_BLOCK,)

    def __init__(
        self, *, strategy: IclStrategy, settings: AgentCall, examples_in_prompt: int = 5
    ) -> None:
        super().__init__(settings=settings)
        self.strategy = strategy
        self.prompt = strategy.prompt()
        self.examples_in_prompt = examples_in_prompt
        self.family = f"icl/{strategy.name}"
        self.agent_name = f"l2.icl_generator.{strategy.name}"

    def messages(self, inp: GenerationInput) -> tuple[ChatMessage, ...]:
        return self.prompt.render(
            dialect=DIALECT_NAME[inp.dialect],
            schema=inp.schema_text,
            cells=cells_block(inp.cell_hits),
            examples=examples_block(inp.examples, self.examples_in_prompt),
            lessons=inp.lessons.for_generator(self.family).render(),
            question=inp.question,
            evidence=evidence_line(inp.evidence),
        )
