"""Types shared by every layer: the frozen model base and the token usage of LLM calls.

They sit below the model layer because both the model client (which counts usage) and the
pipelines (which add it up per question) use them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Base of every value that crosses a module boundary: immutable, hashable, safe to share
    across async tasks and Ray actors, and a typo in a field name is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(Frozen):
    """Token usage and spend of one or more LLM calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    # Of prompt_tokens, those the server took from its prefix (KV) cache instead of evaluating.
    cached_prompt_tokens: int = 0
    # Seconds the model slots were busy with these calls (models.budget.BusyTime): what an hourly
    # price (a self-hosted slot's CPU- or GPU-hours) is charged for.
    busy_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            busy_s=self.busy_s + other.busy_s,
        )
