"""The settings chosen per database: the rules, their application to ``auto`` settings only, and
the pipeline that measures each database and answers with what was chosen for it."""

from __future__ import annotations

import shutil

import pytest

from core.config import load_config
from pipelines.agents.runtime import as_executor
from pipelines.contracts import Task
from pipelines.database_rules import (
    LARGE_SCHEMA_TOKENS,
    DatabaseProfile,
    choose,
    schema_tokens,
    settle,
)
from pipelines.factory import build_pipeline
from pipelines.sandbox import Sandbox
from pipelines.settings import PipelineSettings
from pipelines.strategies.adaptive import AdaptivePipeline
from pipelines.strategies.adaptive_settings import AdaptiveScaling
from pipelines.strategies.single_pass import SinglePassScaling

SMALL = DatabaseProfile(db_id="s", schema_tokens=800, own_examples=0)
LARGE = DatabaseProfile(db_id="l", schema_tokens=12_000, own_examples=5)


def _values(profile: DatabaseProfile) -> dict[str, object]:
    return {c.name: c.value for c in choose(profile)}


def test_each_rule_reads_the_measurement_it_names():
    assert _values(SMALL) == {
        "sample_rows": 3,
        "example_threshold": 1.5,
        "select": "likelihood",
        "widen_min_votes": 0,
        "escalate_within_s": None,
    }
    assert _values(LARGE) == {
        "sample_rows": 1,
        "example_threshold": 0.1,
        "select": "vote",
        "widen_min_votes": 2,
        "escalate_within_s": 90.0,
    }
    # own examples alone move only the example threshold; size alone everything else
    own = SMALL.model_copy(update={"own_examples": 1})
    assert _values(own) == {**_values(SMALL), "example_threshold": 0.1}
    at_the_line = SMALL.model_copy(update={"schema_tokens": LARGE_SCHEMA_TOKENS})
    assert _values(at_the_line) == _values(SMALL)


def test_settle_chooses_only_what_is_auto():
    settings = PipelineSettings.model_validate({"single_pass": {"sample_rows": 2}})
    scaling = AdaptiveScaling(select="likelihood")
    settled, scaling, chosen = settle(settings, scaling, LARGE)
    assert settled.single_pass.sample_rows == 2  # set by the user: kept
    assert scaling.select == "likelihood"
    assert settled.understanding.example_threshold == 0.1
    assert scaling.widen_min_votes == 2 and scaling.escalate_within_s == 90.0
    assert [str(c) for c in chosen] == [
        "example_threshold=0.1",
        "widen_min_votes=2",
        "escalate_within_s=90.0",
    ]


def test_a_scaling_rule_applies_only_to_the_strategies_with_its_setting():
    settings, scaling, chosen = settle(PipelineSettings(), SinglePassScaling(), None)
    assert settings.single_pass.sample_rows == 3 and settings.understanding.example_threshold == 1.5
    assert scaling == SinglePassScaling() and {c.name for c in chosen} == {
        "sample_rows",
        "example_threshold",
    }


async def test_schema_tokens_measure_the_whole_prompt_with_one_row(tiny_db, enterprise_db):
    with Sandbox() as sandbox:
        small = await schema_tokens(as_executor(sandbox), tiny_db)
        large = await schema_tokens(as_executor(sandbox), enterprise_db)
    assert 0 < small < LARGE_SCHEMA_TOKENS < large


async def test_the_pipeline_answers_each_database_with_its_own_choice(
    tiny_db, enterprise_db, scripted, tmp_path
):
    """One pipeline, two databases: each question's strategy is built with the settings chosen
    for its database, the prediction says which, and a database gains solved examples of its own
    (the endpoint's accepted answers) without being measured again."""
    large = enterprise_db.model_copy(update={"path": str(tmp_path / "workitems.duckdb")})
    shutil.copy(enterprise_db.path, large.path)
    cfg = load_config(["scaling=adaptive", "pipeline.trace.directory=null"])
    client = scripted({"single_pass": lambda r: ["SELECT COUNT(*) FROM singer"] * r.n})
    with Sandbox() as sandbox:
        pipeline = build_pipeline(cfg, client=client, sandbox=sandbox)
        small_strategy, small_chosen = await pipeline.strategy_for(tiny_db)
        large_strategy, large_chosen = await pipeline.strategy_for(large)
        assert isinstance(small_strategy, AdaptivePipeline) and small_strategy is not large_strategy
        assert small_strategy.scaling.select == "likelihood"
        assert large_strategy.scaling.select == "vote"
        assert large_strategy.settings.single_pass.sample_rows == 1
        assert (await pipeline.strategy_for(tiny_db))[0] is small_strategy  # built once
        prediction = await pipeline.answer(Task(task_id="q", question="How many?", db=tiny_db))
        assert prediction.chosen == small_chosen and prediction.exec_result.rows == ((5,),)
        (tmp_path / "workitems.examples.yml").write_text(
            "- question: How many tickets?\n  sql: SELECT COUNT(*) FROM tickets\n"
        )
        _, with_examples = await pipeline.strategy_for(large)
        await pipeline.aclose()
    assert "example_threshold=1.5" in map(str, large_chosen)
    assert "example_threshold=0.1" in map(str, with_examples)


async def test_a_database_that_cannot_be_measured_fails_as_its_strategy_says(
    scripted, tmp_path, tiny_db
):
    broken = tiny_db.model_copy(update={"path": str(tmp_path / "missing.sqlite")})
    cfg = load_config(["scaling=adaptive", "pipeline.trace.directory=null"])
    with Sandbox() as sandbox:
        pipeline = build_pipeline(cfg, client=scripted({}), sandbox=sandbox)
        prediction = await pipeline.answer(Task(task_id="q", question="How many?", db=broken))
    assert prediction.error and "schema" in prediction.error
    assert "sample_rows=3" in map(str, prediction.chosen)  # the choice for a small database


@pytest.mark.parametrize("experiment", ["demo", "claims", "enterprise", "adaptive", "ablation"])
def test_no_experiment_sets_pipeline_behaviour_outside_its_variants(experiment):
    """An experiment names a benchmark, a slice, variants, caches and prices: composed with it,
    the pipeline and scaling sections are the defaults' (the ablation's scaling those of the
    full-width strategy whose parts its variants remove)."""
    plain = load_config(["scaling=default"] if experiment == "ablation" else [])
    cfg = load_config([f"experiment={experiment}"])
    assert cfg.pipeline == plain.pipeline
    assert cfg.scaling == plain.scaling
