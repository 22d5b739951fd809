"""The settings of the full-width orchestrator (``pipelines/strategies/orchestrator.py``): the
``scaling`` group when ``scaling.strategy`` is ``full_width`` (``conf/scaling/default.yaml``,
``cpu_small.yaml``, ``router.yaml``), and the samples they ask for (``GenJob``s) and the calls
they allow.

    >>> [job.family for job in synthesis_jobs(FullWidthScaling(k={"reasoning": 1, "icl/cot": 2}))]
    ['reasoning', 'icl/cot', 'icl/cot']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import comb
from typing import Annotated, Literal

from pydantic import Field, model_validator

from pipelines.agents.generators import GENERATORS
from pipelines.strategies.scaling import StrategyScaling


class FullWidthScaling(StrategyScaling):
    """Every width, depth and cap of the full-width orchestrator.

    ``k`` maps a generator family (``pipelines/agents/generators.py``) to its samples per question;
    a family it does not name draws none. On the command line: ``scaling.k.reasoning=0``, and for
    names with a slash a mapping merged into the rest, ``scaling.k={icl/cot:0,icl/decompose:0}``.
    """

    strategy: Literal["full_width"] = "full_width"
    k: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=lambda: {"reasoning": 2, "icl/direct": 2, "icl/cot": 2, "icl/decompose": 2}
    )
    # Samples per generator in a re-synthesis pass; None: max(1, largest k // 2).
    k_resynth: int | None = Field(default=None, ge=1)
    fixer_max_passes: int = Field(default=2, ge=0)
    refinement_max_passes: int = Field(default=1, ge=0)
    resynth_max_passes: int = Field(default=2, ge=0)
    complexity_retry_threshold: int = Field(default=7, ge=1, le=11)
    tournament_enabled: bool = True
    # The difficulty router (pipelines/strategies/router.py): a profile per question, the
    # probe's agreement stops early (profiles: pipeline.router.profiles).
    router_enabled: bool = False
    temperatures: tuple[float, ...] = (0.2, 0.7, 1.0)

    @model_validator(mode="after")
    def _needs_a_generator(self) -> FullWidthScaling:
        if self.candidates == 0:
            raise ValueError(f"FullWidthScaling produces no candidates: every k is 0 ({self.k})")
        return self

    @property
    def first_wave(self) -> int:
        return max(1, self.candidates)

    @property
    def candidates(self) -> int:
        """First-wave candidates: the sum of ``k``."""
        return sum(self.k.values())

    @property
    def effective_k_resynth(self) -> int:
        return (
            self.k_resynth
            if self.k_resynth is not None
            else max(1, max(self.k.values(), default=0) // 2)
        )


@dataclass(frozen=True)
class GenJob:
    """One sample to draw: generator family, sample index within it, temperature."""

    family: str
    index: int
    temperature: float


def families(scaling: FullWidthScaling) -> tuple[str, ...]:
    """The families that draw samples, in registry order."""
    return tuple(f for f in GENERATORS if scaling.k.get(f, 0))


def _temperature(scaling: FullWidthScaling, family: str, index: int) -> float:
    # Offset by the family's place in the registry so that low k still spreads every temperature
    # across the pool.
    temps = scaling.temperatures
    return temps[(list(GENERATORS).index(family) + index) % len(temps)]


def synthesis_jobs(
    scaling: FullWidthScaling, caps: Mapping[str, int] | None = None
) -> list[GenJob]:
    """The first wave: ``scaling.k`` samples per family, each at most ``caps[family]`` when given
    (the router's probe; a family ``caps`` does not name draws none)."""
    plan = [
        (f, scaling.k[f] if caps is None else min(caps.get(f, 0), scaling.k[f]))
        for f in families(scaling)
    ]
    return [GenJob(f, i, _temperature(scaling, f, i)) for f, k in plan for i in range(k)]


def resynthesis_jobs(scaling: FullWidthScaling, pass_no: int) -> list[GenJob]:
    k = scaling.effective_k_resynth
    return [
        GenJob(f, i, _temperature(scaling, f, pass_no + i))
        for f in families(scaling)
        for i in range(k)
    ]


def call_allowance(
    scaling: FullWidthScaling,
    *,
    first_wave: int,
    max_finalists: int,
    extractor: bool = True,
    both_orders: bool = True,
) -> int:
    """Upper bound of LLM calls one task may make under ``scaling``.

    generated G = first wave + resynth passes × k_resynth × generators; each generated candidate
    may be fixed ``fixer_max_passes`` times; each refinement pass critiques and revises at most
    one bucket per candidate; the tournament plays every pair of at most ``max_finalists``
    (twice with ``both_orders``).
    """
    generated = first_wave + scaling.resynth_max_passes * scaling.effective_k_resynth * len(
        families(scaling)
    )
    refinement = 2 * generated * scaling.refinement_max_passes
    pool = generated * (1 + scaling.refinement_max_passes)
    tournament = (
        comb(min(max_finalists, pool), 2) * (1 + both_orders) if scaling.tournament_enabled else 0
    )
    return int(extractor) + generated * (1 + scaling.fixer_max_passes) + refinement + tournament
