"""Direct: few-shot SQL completion — a line or two of intent, then the query.

>>> DIRECT.prompt   # pipelines/prompts/icl_direct.md, rendered by ICLGenerator
'icl_direct'
"""

from pipelines.agents.icl_generator import icl_strategy

DIRECT = icl_strategy(
    "direct",
    "few-shot completion: the examples' SQL shape carried over to the new question",
)
