"""The settings of the agentic mode (``pipelines/strategies/agentic.py``): the ``scaling`` group
when ``scaling.strategy`` is ``agentic`` (``conf/scaling/agentic.yaml``).

    AgenticScaling(max_attempts=5).first_wave   ──► 1
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from pipelines.agentic_mode.checks import DEFAULT_CHECKS
from pipelines.repair.registry import RepairEntry, RepairList, build_repairs
from pipelines.strategies.scaling import StrategyScaling


class AgenticScaling(StrategyScaling):
    """Turns, budgets and stages of the agentic mode (``pipelines/strategies/agentic.py``): one
    generated SQL at a time, checked, executed, classified and repaired with the taxonomy's
    directives until one is accepted or ``max_attempts`` generations were made.

    The stage switches are the ablations: with no ``checks`` a candidate goes straight to the
    verifier and the database; without ``directives`` the generator gets the raw error
    message instead of the class and its directive (the plain retry-with-error baseline);
    without ``schema_expansion`` a schema-coverage error is repaired in place like any other.
    """

    strategy: Literal["agentic"] = "agentic"
    max_attempts: int = Field(default=3, ge=1, le=10)  # generator calls per question
    # Entities the selection may ask for at the start (shown hubs first; a cap keeps the
    # generator's prompt short on a CPU) and at most this many more over all expansions.
    # Two: on the 2-core CPU an enterprise prompt with three entities is 4,900-6,100 tokens and
    # 80-120 s to evaluate, and the model asked for three named three whether it needed them
    # or not; a missing entity comes back through the schema expansion.
    max_entities: int = Field(default=2, ge=1)
    max_expanded: int = Field(default=2, ge=0)
    # How the first entities are chosen: "llm" (one short call over the catalog, its answer
    # constrained to entity names), "focus" (the schema focus's linking, no LLM), or both.
    select_entities: Literal["llm", "focus", "both"] = "llm"
    examples: int = Field(default=3, ge=0)  # the database's own solved examples, most similar first
    # An empty result (the taxonomy's ``accept``: it can be right) goes back once for a repair
    # while attempts remain; it stands if the repair finds no rows either. Without the validator
    # nothing else questions it: the first enterprise trials accepted a join that matched nothing.
    retry_empty: bool = True
    # The checker chain's stages, in order, by name (pipelines/repair/registry.py; the rewriters,
    # then the blockers: pipelines/agentic_mode/checks/). ``column_names`` (not listed: binds an
    # unknown column with the schema-grounded column repair instead of reporting it) rewrote 6
    # questions' SQL on the claims tuning half, turned none right and one wrong (a join to an
    # unrelated table). [] : no chain.
    checks: RepairList = DEFAULT_CHECKS
    directives: bool = True
    schema_expansion: bool = True
    cheatsheet: bool = True
    verifier: bool = False
    validator: bool = False
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)  # of the first generation
    # Of a repair: a little randomness, so a repeated mistake is not regenerated verbatim.
    repair_temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    # The earlier attempts' SQL in the generator's history (their feedback always is). Off: the
    # 1.5B, shown its failed SQL, wrote it again in most repairs of the enterprise tuning
    # questions, even redrawn at 0.8 with another seed.
    show_failed_sql: bool = False
    # Of the one redraw of a generation that repeats an earlier attempt's SQL (the 1.5B, shown
    # its failed SQL, often writes it again at the repair temperature).
    duplicate_temperature: float = Field(default=0.8, ge=0.0, le=2.0)

    @field_validator("checks")
    @classmethod
    def _run_before_execution(cls, checks: tuple[RepairEntry, ...]) -> tuple[RepairEntry, ...]:
        for check in build_repairs(checks):
            if check.phase != "written":
                raise ValueError(f"{check.name} runs on an executed SQL; the chain runs before")
        return checks
