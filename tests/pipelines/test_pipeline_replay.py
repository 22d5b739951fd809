"""The pipelines end to end on a real SQLite database and the real sandbox, with the 0.5B model's
recorded replies (replay backend) and injected faults; plus one live run with the real 0.5B.

Re-record after changing a prompt: ``make cassettes`` (SCALE_ANALYTICS_RECORD=1).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import models
from core.config import load_config, section
from models.backends.replay import record_mode_from_env
from models.errors import ModelUnavailable
from models.registry import get_spec
from models.store import ModelStore
from models.types import ChatMessage, ChatRequest
from pipelines.contracts import Task
from pipelines.factory import build_pipeline
from pipelines.sandbox import Sandbox
from pipelines.settings import PipelineSettings
from pipelines.strategies.adaptive import AdaptivePipeline
from pipelines.strategies.full_width_settings import call_allowance, synthesis_jobs
from pipelines.strategies.orchestrator import Orchestrator
from pipelines.strategies.registry import scaling_settings

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes" / "pipelines"
QUESTION = "How many singers are from France?"


@pytest.fixture
def replay(request):
    """A replay client on this test's own cassette (tests share prompts, not sampled replies)."""
    cassette = CASSETTES / (
        re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_") + ".jsonl"
    )
    if not cassette.exists() and not record_mode_from_env():
        pytest.skip(f"no cassette at {cassette}: record it with `make cassettes`")
    cassette.parent.mkdir(parents=True, exist_ok=True)
    client = models.replay_client(cassette)
    yield client
    client.close()


@pytest.fixture
def real_sandbox():
    with Sandbox(timeout_s=10, row_cap=1000) as sandbox:
        yield sandbox


class Faulty:
    """Fails every request for the agent whose task line starts with ``prefix``; passes the rest through."""

    def __init__(self, inner, prefix: str) -> None:
        self.inner, self.prefix = inner, prefix

    async def chat(self, request, *, role, budget=None):
        if any(
            line.startswith(self.prefix)
            for m in request.messages
            for line in m.content.splitlines()
        ):
            raise ModelUnavailable(f"injected fault for {self.prefix!r}")
        return await self.inner.chat(request, role=role, budget=budget)


def cpu_cfg(tmp_path, *extra):
    # A generous timeout: recording runs the real model, whose server starts inside the first task.
    return load_config(
        [
            "scaling=cpu_small",
            "pipeline=cpu_small",
            "model=replay",
            "scaling.global_timeout_s=1800",
            f"pipeline.trace.directory={tmp_path}",
            *extra,
        ]
    )


async def test_full_pipeline_replayed(tiny_db, replay, real_sandbox, tmp_path):
    cfg = cpu_cfg(tmp_path)
    pipeline = build_pipeline(cfg, client=replay, sandbox=real_sandbox)
    assert isinstance((await pipeline.strategy_for(tiny_db))[0], Orchestrator)
    prediction, trace = await pipeline.answer_with_trace(
        Task(task_id="r1", question=QUESTION, db=tiny_db)
    )
    scaling = scaling_settings(cfg)
    settings = section(cfg, "pipeline", PipelineSettings)
    assert prediction.error is None and prediction.sql
    assert prediction.exec_result is not None and prediction.exec_result.ok
    assert len([c for c in prediction.candidates if c.lineage == ("gen",)]) <= 4
    allowed = call_allowance(
        scaling,
        first_wave=len(synthesis_jobs(scaling)),
        max_finalists=settings.tournament.max_finalists,
    )
    assert 1 <= prediction.usage.calls <= allowed
    chat = [e for e in trace.events if e.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chat) == prediction.usage.calls
    assert all(e.attributes["gen_ai.response.model"] == "qwen2.5-coder-0.5b" for e in chat)
    assert {e.surface for e in trace.events} >= {"cognitive", "operational"}


@pytest.mark.parametrize(
    ("prefix", "label"),
    [
        ("You extract", "extractor_failed"),
        ("You think step by step", "generator_failed"),
        ("You review", "critic_failed"),
    ],
)
async def test_injected_faults_degrade_with_replayed_model(
    tiny_db, replay, real_sandbox, tmp_path, prefix, label
):
    pipeline = build_pipeline(
        cpu_cfg(tmp_path), client=Faulty(replay, prefix), sandbox=real_sandbox
    )
    prediction = await pipeline.answer(Task(task_id="r2", question=QUESTION, db=tiny_db))
    assert label in prediction.degradation_reasons and prediction.degraded
    assert prediction.error is None and prediction.sql


async def test_single_pass_replayed(tiny_db, replay, real_sandbox, tmp_path):
    cfg = load_config(
        [
            "scaling=single_pass",
            "model=replay",
            f"pipeline.trace.directory={tmp_path}",
        ]
    )
    pipeline = build_pipeline(cfg, client=replay, sandbox=real_sandbox)
    prediction = await pipeline.answer(Task(task_id="r3", question=QUESTION, db=tiny_db))
    assert (
        prediction.error is None and prediction.usage.calls == 1 and len(prediction.candidates) == 1
    )


async def test_adaptive_pipeline_replayed(tiny_db, replay, real_sandbox, tmp_path):
    # No pool counts as a clear majority, so every step runs and the recording holds a widening
    # and the likelihood scoring of the pool; the 0.5B at T=1.2 splits on this question (its
    # largest bucket has 4 spellings: 8 SQLs reach the other buckets).
    cfg = load_config(
        [
            "scaling=adaptive",
            "model=replay",
            "scaling.stop_min_votes=99",
            "scaling.select_max_sqls=8",
            "scaling.temperature=1.2",
            f"pipeline.trace.directory={tmp_path}",
        ]
    )
    pipeline = build_pipeline(cfg, client=replay, sandbox=real_sandbox)
    strategy, _ = await pipeline.strategy_for(tiny_db)
    assert isinstance(strategy, AdaptivePipeline)
    prediction, trace = await pipeline.answer_with_trace(
        Task(
            task_id="r4",
            question="Which singers performed in the most concerts, and how old are they?",
            db=tiny_db,
        )
    )
    adaptive = strategy.scaling  # its settings as chosen for tiny_db
    assert prediction.error is None and prediction.exec_result.ok
    assert 1 <= prediction.usage.calls <= strategy.call_allowance()
    assert [s.step for s in prediction.steps][-2:] == ["widen", "likelihood"]
    decision = next(d for d in trace.decisions if d.label == "likelihood")
    assert 2 <= decision.features["scored"] <= adaptive.select_max_sqls
    assert prediction.answered_by == "likelihood"
    assert prediction.steps[-1].calls == decision.features["scored"]


@pytest.mark.real_model
async def test_full_pipeline_with_the_real_05b_model(tiny_db, real_sandbox, tmp_path):
    cfg = load_config(
        [
            "scaling=cpu_small",
            "pipeline=cpu_small",
            "model=qwen2.5-coder-0.5b",
            "model.slots.default.ctx_per_slot=4096",
            "scaling.global_timeout_s=900",
            f"pipeline.trace.directory={tmp_path}",
            # Every stage runs; shorter generations keep the test near a minute on 2 cores
            # (the profile's own lengths decode ~1,900 tokens, ~165 s).
            "pipeline.agents.extractor.max_tokens=96",
            "pipeline.agents.reasoning.max_tokens=200",
            "pipeline.agents.icl.max_tokens=128",
            "pipeline.agents.fixer.max_tokens=128",
            "pipeline.agents.critic.max_tokens=96",
            "pipeline.agents.revisor.max_tokens=128",
            "pipeline.agents.selector.max_tokens=48",
        ]
    )
    if not ModelStore(cfg.paths.models).is_verified(get_spec("qwen2.5-coder-0.5b")):
        pytest.skip("the 0.5B model is not pulled: scale-analytics models pull qwen2.5-coder-0.5b")
    client = models.build_client(cfg.model)
    try:
        # Start the server outside the task's clock: the global timeout is for answering.
        await client.chat(
            ChatRequest(messages=(ChatMessage(role="user", content="SELECT 1"),), max_tokens=1),
            role="generator",
        )
        pipeline = build_pipeline(cfg, client=client, sandbox=real_sandbox)
        prediction, trace = await pipeline.answer_with_trace(
            Task(task_id="live", question=QUESTION, db=tiny_db)
        )
    finally:
        await client.aclose()
    assert prediction.error is None and prediction.candidates
    assert trace.usage.calls >= 5  # extractor + 4 generators at least
    assert not {"budget_exceeded", "global_timeout"} & set(prediction.degradation_reasons)
