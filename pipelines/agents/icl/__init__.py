"""The ICL prompting strategies, one GeneratorSpec per file (registered in
``pipelines/agents/generators.py``)."""

from __future__ import annotations

from pipelines.agents.icl.cot import COT
from pipelines.agents.icl.decompose import DECOMPOSE
from pipelines.agents.icl.direct import DIRECT

__all__ = ["COT", "DECOMPOSE", "DIRECT"]
