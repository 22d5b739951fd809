"""The generator registry: every consumer reads GENERATORS, so a family added to it (here one
defined in this file: a class, a spec, a prompt file) is generated, widened, tempered and
counted like the built-in ones, with no other change."""

from __future__ import annotations

import json

import pytest

from core.types import Usage
from models.types import ChatResponse
from pipelines.agents.base import END_OF_SQL_BLOCK, GeneratorSpec, SQLGenerator
from pipelines.agents.errors import PipelineConfigError
from pipelines.agents.generators import GENERATORS
from pipelines.contracts import Task
from pipelines.settings import PipelineSettings, RouterSettings
from pipelines.strategies.full_width_settings import (
    FullWidthScaling,
    call_allowance,
    families,
    resynthesis_jobs,
    synthesis_jobs,
)
from pipelines.strategies.orchestrator import Orchestrator

RIGHT = "SELECT count(*) FROM singer WHERE country = 'France'"


class ShoutGenerator(SQLGenerator):
    """The whole of a new family's code when it answers in a ```sql block."""

    stop = (END_OF_SQL_BLOCK,)


@pytest.fixture
def shout(tmp_path, monkeypatch) -> GeneratorSpec:
    (tmp_path / "shout.md").write_text(
        "[user]\nYou shout one ${dialect} query.\n\nQuestion: ${question}\n${evidence}\n"
    )
    spec = GeneratorSpec(
        name="shout",
        generator=ShoutGenerator,
        view="ddl",
        prompt="shout",
        prompt_dir=str(tmp_path),
        settings="icl",
    )
    monkeypatch.setitem(GENERATORS, spec.name, spec)  # the one registry line
    return spec


class ShoutingClient:
    """Answers the shout prompt itself; every other agent goes to the scripted client."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.shouted = []

    async def chat(self, request, *, role="generator", budget=None):
        if "You shout" not in request.messages[-1].content:
            return await self.inner.chat(request, role=role, budget=budget)
        self.shouted.append(request)
        texts = (f"- shout\n```sql\n{RIGHT}\n```",) * request.n
        return ChatResponse(
            texts=texts,
            usage=Usage(calls=1, prompt_tokens=50, completion_tokens=10),
            latency_s=0.0,
            model="scripted",
            finish_reasons=("stop",) * request.n,
        )


def script() -> dict:
    understanding = {"literals": ["France"], "skeleton": "How many [COL] are from _?"}
    return {
        "extractor": lambda r: json.dumps({**understanding, "keywords": ["singers"]}),
        "reasoning": lambda r: f"<think>- singers in France</think><sql>{RIGHT}</sql>",
        "critic": lambda r: json.dumps(
            {
                "error_class": "none",
                "suggested_fix": "",
                "generator_feedback": "",
                "feedback_kind": "warning",
                "complexity": 2,
                "verdict": "accept",
            }
        ),
    }


async def test_a_registered_family_generates_under_its_name(shout, tiny_db, sandbox, scripted):
    client = ShoutingClient(scripted(script()))
    scaling = FullWidthScaling(k={"reasoning": 1, "shout": 2}, temperatures=(0.2, 0.7, 1.0))
    pipeline = Orchestrator(client=client, sandbox=sandbox, scaling=scaling)
    prediction = await pipeline.answer(
        Task(task_id="s1", question="How many singers are from France?", db=tiny_db)
    )
    producers = sorted(c.producer for c in prediction.candidates)
    # registry position 4 offsets its temperatures: (4 + 0) % 3 and (4 + 1) % 3
    assert producers == ["reasoning/T=0.2", "shout/T=0.7", "shout/T=1"]
    assert prediction.sql == RIGHT and len(client.shouted) == 2
    # view="ddl" and no examples or cells: the CREATE TABLE schema in the shared system message
    system = client.shouted[0].messages[0].content
    assert "CREATE TABLE singer" in system
    assert [r.max_tokens for r in client.shouted] == [PipelineSettings().agents.icl.max_tokens] * 2
    assert families(scaling) == ("reasoning", "shout")
    assert [j.family for j in resynthesis_jobs(scaling, 1)] == ["reasoning", "shout"]
    assert call_allowance(scaling, first_wave=3, max_finalists=4) > call_allowance(
        FullWidthScaling(k={"reasoning": 3}), first_wave=3, max_finalists=4
    )  # re-synthesis draws from both families


def test_the_router_probe_reads_the_registry(shout):
    scaling = FullWidthScaling(k={"reasoning": 2, "shout": 3, "icl/cot": 2})
    probe = synthesis_jobs(scaling, RouterSettings(probe_k={"shout": 1, "icl/cot": 5}).probe_k)
    assert [(j.family, j.index) for j in probe] == [("icl/cot", 0), ("icl/cot", 1), ("shout", 0)]


def test_unknown_families_fail_at_construction_naming_the_known_ones(sandbox, scripted):
    def build(scaling, settings=PipelineSettings()):
        return Orchestrator(
            client=scripted({}), sandbox=sandbox, scaling=scaling, settings=settings
        )

    with pytest.raises(PipelineConfigError, match=r"scaling.k .*\['shout'\]; known: \['reasoning'"):
        build(FullWidthScaling(k={"reasoning": 1, "shout": 1}))
    probe = PipelineSettings(router=RouterSettings(probe_k={"icl/shout": 1}))
    with pytest.raises(ValueError, match=r"probe_k .*\['icl/shout'\]"):
        build(FullWidthScaling(router_enabled=True), probe)
    profile = PipelineSettings(router=RouterSettings(profiles={"hard": {"k": {"shout": 1}}}))
    with pytest.raises(PipelineConfigError, match=r"router profile 'hard'.*\['shout'\]"):
        build(FullWidthScaling(router_enabled=True), profile)


def test_no_candidates_is_refused():
    with pytest.raises(ValueError, match="no candidates"):
        FullWidthScaling(k={"reasoning": 0, "icl/cot": 0})
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        FullWidthScaling(k={"reasoning": -1})
