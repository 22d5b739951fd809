"""What every strategy's ``scaling`` settings hold: the strategy's name, which picks it (the key
of ``pipelines/strategies/registry.py``), and the limits of one question. Each strategy's own
settings extend this model beside the strategy (``AdaptiveScaling``, ``AgenticScaling``, …).

    class EchoScaling(StrategyScaling):
        strategy: Literal["echo"] = "echo"
        samples: int = 1

    EchoScaling(global_timeout_s=30).first_wave   ──► 1
"""

from __future__ import annotations

from pydantic import Field

from core.types import Frozen


class StrategyScaling(Frozen):
    """The limits every strategy holds a question to; a strategy's settings subclass it with a
    ``strategy: Literal[<its name>]`` field and its own widths, steps and switches."""

    strategy: str
    # Past it the search stops and the question is answered from what exists (``degraded``).
    global_timeout_s: float = Field(default=120, gt=0)
    token_budget: int = Field(default=200_000, gt=0)

    @property
    def first_wave(self) -> int:
        """Candidates the strategy generates before any refinement (the endpoint's progress)."""
        return 1

    @property
    def retrieves(self) -> bool:
        """Whether the strategy reads the L0 indexes (cell values, solved examples)."""
        return True
