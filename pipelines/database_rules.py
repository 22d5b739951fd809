"""Settings the pipeline chooses for each database from what it measures about it.

A setting configured as ``auto`` (the default of each below) is chosen per database by its rule;
any other value — a user's override, an experiment's variant — is used as configured. Every
surface (``ask``, the endpoint, ``eval``) answers through ``pipelines.factory.build_pipeline``,
which applies the rules, so a benchmark is measured with what a user's own database gets.

    DatabaseRef ──► measure once per database version: the whole reference schema prompt with
                    one example row per table (estimated tokens), its own solved examples
                ──► DatabaseProfile ──► RULES ──► concrete settings ──► the strategy
                                                └─► ChosenSetting records (Prediction.chosen,
                                                    the run's summary and MLflow run)

The rules (measurements: docs/benchmarks.md#one-configuration):

| setting | a large schema (> 3,000 tokens) | a small one |
|---|---|---|
| ``pipeline.single_pass.sample_rows`` | 1 example row per table | 3 |
| ``scaling.select`` (adaptive) | ``vote`` | ``likelihood`` |
| ``scaling.widen_min_votes`` (adaptive) | 2 | 0 |
| ``scaling.escalate_within_s`` (adaptive) | 7.5 s per 1,000 schema tokens | none |

and ``pipeline.understanding.example_threshold``: 0.1 where the database has solved examples of
its own, else 1.5. A ``scaling`` rule applies to the strategies whose settings have its field.

    >>> small = DatabaseProfile(db_id="concert_singer", schema_tokens=1200, own_examples=0)
    >>> [str(c) for c in choose(small)]
    ['sample_rows=3', 'example_threshold=1.5', 'select=likelihood', 'widen_min_votes=0', 'escalate_within_s=none']
    >>> [str(c) for c in choose(small.model_copy(update={"schema_tokens": 6100, "own_examples": 24}))]
    ['sample_rows=1', 'example_threshold=0.1', 'select=vote', 'widen_min_votes=2', 'escalate_within_s=45.8']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from core.types import Frozen
from pipelines.contracts import ChosenSetting, DatabaseRef
from pipelines.schema.reference import reference_schema
from pipelines.settings import PipelineSettings
from pipelines.strategies.scaling import StrategyScaling

S = TypeVar("S", bound=StrategyScaling)

AUTO = "auto"
# Estimated tokens of the whole reference prompt (one example row per table) above which a
# schema is large: Spider's dev schemas are at most ~1,800, the claims schema ~6,400, the
# enterprise work-item schema ~12,000. It is also where the schema focus starts cutting.
LARGE_SCHEMA_TOKENS = 3000


class DatabaseProfile(Frozen):
    """What the rules read about one database."""

    db_id: str
    schema_tokens: int  # the whole reference prompt, one example row per table, notes as shown
    own_examples: int  # solved examples of its own (a file beside it, accepted answers)

    @property
    def large(self) -> bool:
        return self.schema_tokens > LARGE_SCHEMA_TOKENS


class Rule(NamedTuple):
    section: str  # "pipeline" or "scaling"
    path: str  # dotted below the section
    choose: Callable[[DatabaseProfile], Any]


def _budget(profile: DatabaseProfile) -> float | None:
    # The budgets measured before the notes were kept whole, 45 s on claims and 90 s on the
    # enterprise schema, in proportion to the prompt every call of a question evaluates; with
    # the notes whole the two schemas are ~6,400 and ~12,000 tokens: 7.5 s per 1,000 gives both.
    return round(7.5 * profile.schema_tokens / 1000, 1) if profile.large else None


# Each setting a database's measurements decide, in the order they are recorded.
RULES: tuple[Rule, ...] = (
    # One row on a large schema: the notes say how values are stored, and rows of a wide table
    # (nested values above all) cost more prompt than they show; Spider keeps three.
    Rule("pipeline", "single_pass.sample_rows", lambda p: 1 if p.large else 3),
    # With solved examples of its own, examples from other databases only at cosine >= 0.95:
    # they lent the 1.5B tables the schema lacks; without, nearly every retrieved one (1.5).
    Rule("pipeline", "understanding.example_threshold", lambda p: 0.1 if p.own_examples else 1.5),
    # A split pool on a large, focused schema: the vote (the likelihood step lost more right
    # greedy answers than it won on the claims halves); on a small one the likelihood.
    Rule("scaling", "select", lambda p: "vote" if p.large else "likelihood"),
    # On a large schema a pool where no two candidates agree was never turned right by widening.
    Rule("scaling", "widen_min_votes", lambda p: 2 if p.large else 0),
    Rule("scaling", "escalate_within_s", _budget),
)


def _name(rule: Rule) -> str:
    return rule.path.rsplit(".", 1)[-1]


def choose(profile: DatabaseProfile) -> tuple[ChosenSetting, ...]:
    """What every rule chooses for ``profile`` (whether or not the setting is ``auto``)."""
    return tuple(ChosenSetting(name=_name(rule), value=rule.choose(profile)) for rule in RULES)


def _get(model: Any, path: str) -> Any:
    # None where the model has no such field (a scaling rule of another strategy's settings)
    for key in path.split("."):
        model = getattr(model, key, None)
    return model


def _set(model: Any, path: str, value: Any) -> Any:
    head, _, rest = path.partition(".")
    if not rest:
        return model.model_copy(update={head: value})
    return model.model_copy(update={head: _set(getattr(model, head), rest, value)})


def settle(
    settings: PipelineSettings, scaling: S, profile: DatabaseProfile | None
) -> tuple[PipelineSettings, S, tuple[ChosenSetting, ...]]:
    """``settings`` and ``scaling`` with every ``auto`` setting chosen for ``profile``, and what
    was chosen. Without a profile (a database that could not be measured, a strategy built
    alone in a test) each rule chooses as for a small database without examples of its own."""
    profile = profile or DatabaseProfile(db_id="", schema_tokens=0, own_examples=0)
    models = {"pipeline": settings, "scaling": scaling}
    chosen = []
    for rule, setting in zip(RULES, choose(profile)):
        if _get(models[rule.section], rule.path) == AUTO:
            models[rule.section] = _set(models[rule.section], rule.path, setting.value)
            chosen.append(setting)
    return models["pipeline"], models["scaling"], tuple(chosen)


async def schema_tokens(executor: Any, db: DatabaseRef) -> int:
    """Estimated tokens of ``db``'s whole reference prompt with one example row per table (the
    profile's ``schema_tokens``); raises what reading its schema raises."""
    return (await reference_schema(executor, db, sample_rows=1)).tokens


async def settle_for(
    executor: Any, db: DatabaseRef, settings: PipelineSettings, scaling: S
) -> tuple[PipelineSettings, S, tuple[ChosenSetting, ...]]:
    """``settle`` for ``db`` measured now (its example files beside it counted): for a script
    that reads settings outside a pipeline (``benchmarks/``)."""
    from pipelines.indexing.examples.own_examples import own_examples_of

    profile = DatabaseProfile(
        db_id=db.db_id,
        schema_tokens=await schema_tokens(executor, db),
        own_examples=len(own_examples_of(db)),
    )
    return settle(settings, scaling, profile)
