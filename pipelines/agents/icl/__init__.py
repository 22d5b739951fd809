"""The ICL prompting strategies, one per file; ``STRATEGIES`` maps a name to its strategy."""

from __future__ import annotations

from pipelines.agents.icl.cot import COT
from pipelines.agents.icl.decompose import DECOMPOSE
from pipelines.agents.icl.direct import DIRECT
from pipelines.agents.icl.strategy import IclStrategy

STRATEGIES: dict[str, IclStrategy] = {s.name: s for s in (DIRECT, COT, DECOMPOSE)}

__all__ = ["COT", "DECOMPOSE", "DIRECT", "STRATEGIES", "IclStrategy"]
