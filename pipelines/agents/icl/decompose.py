"""Question decomposition: sub-questions solved bottom-up, composed into one query.

>>> DECOMPOSE.prompt   # pipelines/prompts/icl_decompose.md, rendered by ICLGenerator
'icl_decompose'
"""

from pipelines.agents.icl_generator import icl_strategy

DECOMPOSE = icl_strategy(
    "decompose",
    "sub-questions with SQL fragments, composed into the final query",
)
