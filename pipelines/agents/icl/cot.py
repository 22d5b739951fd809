"""Chain-of-thought: reason in natural-language bullets, then emit the query.

>>> COT.prompt().name   # pipelines/prompts/icl_cot.md, rendered by ICLGenerator
'icl_cot'
"""

from pipelines.agents.icl.strategy import IclStrategy

COT = IclStrategy(
    name="cot",
    prompt_name="icl_cot",
    description="step-by-step reasoning about tables, joins and values before the SQL",
)
