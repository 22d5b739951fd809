"""Chain-of-thought: reason in natural-language bullets, then emit the query.

>>> COT.prompt   # pipelines/prompts/icl_cot.md, rendered by ICLGenerator
'icl_cot'
"""

from pipelines.agents.icl_generator import icl_strategy

COT = icl_strategy(
    "cot",
    "step-by-step reasoning about tables, joins and values before the SQL",
)
