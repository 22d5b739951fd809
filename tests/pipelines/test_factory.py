"""build_pipeline builds the strategy cfg.scaling.strategy names and wires config into it."""

from __future__ import annotations

import pipelines
from core.config import load_config
from pipelines.contracts import Task
from pipelines.strategies.registry import strategy_class
from pipelines.strategies.single_pass import SinglePassPipeline


async def test_single_pass_from_config(tiny_db, sandbox, scripted, tmp_path):
    cfg = load_config(
        [
            "scaling=single_pass",
            f"pipeline.trace.directory={tmp_path}",
            "pipeline.single_pass.max_tokens=64",
        ]
    )
    client = scripted({"single_pass": lambda r: "SELECT name FROM singer WHERE age > 40"})
    pipeline = pipelines.build_pipeline(cfg, client=client, sandbox=sandbox)
    strategy, chosen = await pipeline.strategy_for(tiny_db)
    assert isinstance(strategy, SinglePassPipeline)
    assert strategy.settings.single_pass.sample_rows == 3  # chosen for a small schema
    prediction = await pipeline.answer(Task(task_id="q", question="Who is over 40?", db=tiny_db))
    await pipeline.aclose()
    assert prediction.chosen == chosen and "sample_rows=3" in map(str, chosen)
    assert prediction.exec_result.row_count == 2
    assert client.requests[0][1].max_tokens == 64
    assert (tmp_path / "traces.jsonl").is_file()


async def test_each_scaling_profile_builds_the_strategy_it_names(tiny_db, sandbox, scripted):
    for profile, name in [
        ("single_pass", "single_pass"),
        ("self_consistency", "single_pass"),
        ("greedy", "adaptive"),
        ("adaptive", "adaptive"),
        ("agentic", "agentic"),
        ("default", "full_width"),
        ("router", "full_width"),
    ]:
        cfg = load_config([f"scaling={profile}"])
        pipeline = pipelines.build_pipeline(cfg, client=scripted({}), sandbox=sandbox)
        strategy, _ = await pipeline.strategy_for(tiny_db)
        assert type(strategy) is strategy_class(name), profile
        assert strategy.scaling.strategy == cfg.scaling.strategy == name
