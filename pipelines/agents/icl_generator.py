"""ICLGenerator: the light schema view + retrieved examples + matching cell values, under one of
the prompting strategies in ``pipelines/agents/icl/`` (direct, cot, decompose: one file each, a
GeneratorSpec made by ``icl_strategy``).

    >>> from pipelines.settings import AgentCall
    >>> gen = icl_strategy("cot", "reason, then the SQL").build(AgentCall(max_tokens=768))
    >>> gen.family, gen.agent_name, gen.prompt.name
    ('icl/cot', 'l2.icl_generator.cot', 'icl_cot')

With a model behind ``runtime``:

    inp = GenerationInput(question=..., schema_text=render_light(view), examples=hits)
    await gen.generate(inp, temperatures=(0.7, 1.0), runtime=runtime)
    ──► [CandidateSQL(sql=..., producer='icl/cot/T=0.7', rationale='- the singers table ...'),
         ...]
"""

from __future__ import annotations

from pipelines.agents.base import END_OF_SQL_BLOCK, GeneratorSpec, SQLGenerator


class ICLGenerator(SQLGenerator):
    stop = (END_OF_SQL_BLOCK,)


def icl_strategy(name: str, description: str) -> GeneratorSpec:
    """Family ``icl/<name>``: ICLGenerator prompted by ``pipelines/prompts/icl_<name>.md`` over the
    light view, the retrieved examples and the cell values."""
    return GeneratorSpec(
        name=f"icl/{name}",
        generator=ICLGenerator,
        view="light",
        examples=True,
        cells=True,
        prompt=f"icl_{name}",
        settings="icl",
        agent=f"l2.icl_generator.{name}",
        description=description,
    )
