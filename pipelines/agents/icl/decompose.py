"""Question decomposition: sub-questions solved bottom-up, composed into one query.

>>> DECOMPOSE.prompt().name   # pipelines/prompts/icl_decompose.md, rendered by ICLGenerator
'icl_decompose'
"""

from pipelines.agents.icl.strategy import IclStrategy

DECOMPOSE = IclStrategy(
    name="decompose",
    prompt_name="icl_decompose",
    description="sub-questions with SQL fragments, composed into the final query",
)
