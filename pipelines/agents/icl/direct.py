"""Direct: few-shot SQL completion — a line or two of intent, then the query.

>>> DIRECT.prompt().name   # pipelines/prompts/icl_direct.md, rendered by ICLGenerator
'icl_direct'
"""

from pipelines.agents.icl.strategy import IclStrategy

DIRECT = IclStrategy(
    name="direct",
    prompt_name="icl_direct",
    description="few-shot completion: the examples' SQL shape carried over to the new question",
)
