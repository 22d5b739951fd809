"""ReasoningGenerator: reasons in ``<think>`` over the DDL view (no examples), answers in ``<sql>``.

    >>> from pipelines.settings import AgentCall
    >>> from pipelines.settings import AgentCall
    >>> gen = REASONING.build(AgentCall(max_tokens=1024))
    >>> gen.family, gen.agent_name, gen.stop
    ('reasoning', 'l2.reasoning_generator', ('</sql>',))

With a model behind ``runtime``:

    inp = GenerationInput(question="How many singers?", schema_text=render_ddl(view))
    await gen.generate(inp, temperatures=(0.2, 0.7), runtime=runtime)
    ──► [CandidateSQL(sql='SELECT count(*) FROM singer', producer='reasoning/T=0.2', ...),
         ...]
"""

from __future__ import annotations

from pipelines.agents.base import GeneratorSpec, SQLGenerator, parse_tagged_reply


class ReasoningGenerator(SQLGenerator):
    stop = ("</sql>",)

    def parse(self, text: str) -> tuple[str, str]:
        return parse_tagged_reply(text)


REASONING = GeneratorSpec(
    name="reasoning",
    generator=ReasoningGenerator,
    view="ddl",
    prompt="reasoning_generator",
    settings="reasoning",
    agent="l2.reasoning_generator",
    description="reasoning in <think> over the CREATE TABLE view, the query in <sql>",
)
