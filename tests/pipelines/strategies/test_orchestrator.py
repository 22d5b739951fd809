"""Orchestrator branches with a scripted model on a real (tiny) SQLite database.

Every loop is checked at its cap, the forced-retry threshold, the re-synthesis triggers, every
degradation path, and that the LLM calls never exceed what FullWidthScaling allows.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from models.errors import BudgetExceeded, ModelTimeout, ModelUnavailable
from pipelines.contracts import CellHit, ExampleHit, Task
from pipelines.settings import (
    PipelineSettings,
    RouterSettings,
    TournamentSettings,
    UnderstandingSettings,
)
from pipelines.strategies.full_width_settings import (
    FullWidthScaling,
    call_allowance,
    resynthesis_jobs,
    synthesis_jobs,
)
from pipelines.strategies.orchestrator import Orchestrator
from pipelines.strategies.single_pass import SinglePassScaling
from pipelines.trace import JsonlTraceSink, read_traces

RIGHT = "SELECT count(*) FROM singer WHERE country = 'France'"  # 2
WRONG = "SELECT count(*) FROM singer"  # 5
OTHER = "SELECT count(*) FROM singer WHERE age > 30"  # 3
BROKEN = "SELECT count(*) FROM singers WHERE country = 'France'"  # no such table

ICL = ("icl/direct", "icl/cot", "icl/decompose")


def icl(n: int) -> dict[str, int]:
    """``n`` samples of each ICL strategy."""
    return dict.fromkeys(ICL, n)


SMALL = FullWidthScaling(
    k={"reasoning": 1, **icl(1)},
    fixer_max_passes=2,
    refinement_max_passes=1,
    resynth_max_passes=2,
    k_resynth=1,
)


def sql_reply(sql: str, why: str = "- count the singers") -> str:
    return f"{why}\n```sql\n{sql}\n```"


def critique(
    verdict="accept", complexity=2, error_class="none", fix="", feedback="", kind="warning"
) -> str:
    return json.dumps(
        {
            "error_class": error_class,
            "suggested_fix": fix,
            "generator_feedback": feedback,
            "feedback_kind": kind,
            "complexity": complexity,
            "verdict": verdict,
        }
    )


def reviewed_sql(request) -> str:
    """The SQL the critic is asked to review."""
    section = request.messages[-1].content.split("Query under review")[1]
    return section.split("```sql\n")[1].split("\n```")[0].strip()


def base_script(**overrides):
    script = {
        "extractor": lambda r: json.dumps(
            {
                "literals": ["France"],
                "skeleton": "How many [COL] are from _?",
                "keywords": ["singers"],
            }
        ),
        "reasoning": lambda r: f"<think>- singers in France</think><sql>{RIGHT}</sql>",
        "icl/direct": lambda r: sql_reply(RIGHT),
        "icl/cot": lambda r: sql_reply(RIGHT),
        "icl/decompose": lambda r: sql_reply(RIGHT),
        "fixer": lambda r: sql_reply(RIGHT, "- the table is singer"),
        "critic": lambda r: critique(),
        "revisor": lambda r: sql_reply(RIGHT, "- add the filter"),
        "selector": lambda r: json.dumps({"reason": "A filters", "winner": "A"}),
    }
    script.update(overrides)
    return script


def task(db, **kw) -> Task:
    return Task(task_id="q1", question="How many singers are from France?", db=db, **kw)


def pipeline(client, sandbox, scaling=SMALL, settings=PipelineSettings(), **kw) -> Orchestrator:
    return Orchestrator(client=client, sandbox=sandbox, scaling=scaling, settings=settings, **kw)


def labels(trace) -> list[str]:
    return [d.label for d in trace.decisions]


async def test_agreeing_candidates_one_bucket_no_selector(tiny_db, sandbox, scripted):
    client = scripted(base_script())
    prediction, trace = await pipeline(client, sandbox, FullWidthScaling()).answer_with_trace(
        task(tiny_db)
    )
    assert prediction.sql == RIGHT and prediction.exec_result.rows == ((2,),)
    assert len(prediction.candidates) == 2 + 2 * 3  # the source's default width
    assert client.calls["selector"] == 0 and client.calls["critic"] == 1
    assert not prediction.degraded and prediction.error is None
    temps = {c.producer.split("T=")[1] for c in prediction.candidates}
    assert temps == {"0.2", "0.7", "1"}  # diverse temperatures across the pool
    assert trace.buckets[-1].producers == ("icl/cot", "icl/decompose", "icl/direct", "reasoning")


async def test_reasoning_sees_ddl_and_icl_sees_examples_and_cells(tiny_db, sandbox, scripted):
    class Cells:
        def search(self, db_id, query, k=5, mode="hybrid", threshold=0.8):
            return [
                CellHit(
                    table="singer", column="country", value="France", score=0.9, source="vector"
                )
            ]

    class Examples:
        async def search(self, skeleton, k=15, exclude_db=None):
            return [
                ExampleHit(
                    question="How many heads are older than 56?",
                    skeleton=skeleton,
                    sql="SELECT count(*) FROM head WHERE age > 56",
                    db_id="x",
                    score=0.1,
                )
            ]

    client = scripted(base_script())
    p = pipeline(client, sandbox, cell_retriever=Cells(), example_retriever=Examples())
    _, trace = await p.answer_with_trace(task(tiny_db))
    prompts = {agent: "\n".join(m.content for m in r.messages) for agent, r in client.requests}
    assert (
        "CREATE TABLE singer" in prompts["reasoning"]
        and "head WHERE age > 56" not in prompts["reasoning"]
    )
    assert (
        "head WHERE age > 56" in prompts["icl/cot"]
        and "singer.country = 'France'" in prompts["icl/cot"]
    )
    assert trace.context.understanding.literals == ("France",)
    assert {e.name for e in trace.events if e.surface == "contextual"} == {
        "l1.cell_retriever",
        "l1.example_retriever",
    }


async def test_fixer_repairs_errors_and_keeps_lineage(tiny_db, sandbox, scripted):
    client = scripted(base_script(**{"icl/direct": lambda r: sql_reply(BROKEN)}))
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    fixed = [c for c in prediction.candidates if "fix:1" in c.lineage]
    assert (
        len(fixed) == 1 and fixed[0].exec_result.ok and fixed[0].producer.startswith("icl/direct")
    )
    assert client.calls["fixer"] == 1
    assert trace.fixes[0].succeeded and "no such table" in trace.fixes[0].error_before


async def test_fixer_stops_at_its_cap_and_drops_the_candidate(tiny_db, sandbox, scripted):
    attempts = iter(
        ["SELECT nope1 FROM singer", "SELECT nope2 FROM singer", "SELECT nope3 FROM singer"]
    )
    client = scripted(
        base_script(
            **{
                "icl/direct": lambda r: sql_reply(BROKEN),
                "fixer": lambda r: sql_reply(next(attempts)),
            }
        )
    )
    scaling = SMALL.model_copy(update={"fixer_max_passes": 2})
    prediction, trace = await pipeline(client, sandbox, scaling).answer_with_trace(task(tiny_db))
    assert client.calls["fixer"] == 2
    assert [f.pass_no for f in trace.fixes] == [1, 2] and not any(f.succeeded for f in trace.fixes)
    assert not any("fix:1" in c.lineage or "fix:2" in c.lineage for c in prediction.candidates)
    assert prediction.sql == RIGHT


async def test_fixer_reads_earlier_failed_repairs_and_never_repeats_them(
    tiny_db, sandbox, scripted
):
    # Two different broken SQLs from the same generator; the fixer keeps proposing the same bad repair.
    broken = iter([BROKEN, "SELECT count(*) FROM singerz"])
    client = scripted(
        base_script(
            **{
                "icl/direct": lambda r: [sql_reply(next(broken)) for _ in range(r.n)],
                "fixer": lambda r: sql_reply("SELECT nope FROM singer"),
            }
        )
    )
    scaling = SMALL.model_copy(
        update={"k": {"reasoning": 1, "icl/direct": 2}, "temperatures": (0.5,)}
    )
    _, trace = await pipeline(client, sandbox, scaling).answer_with_trace(task(tiny_db))
    second_sibling_prompts = [r.messages[-1].content for a, r in client.requests if a == "fixer"][
        1:
    ]
    assert all(
        "SELECT nope FROM singer" in p for p in second_sibling_prompts
    )  # earlier failure shown
    executed_repairs = [sql for sql in sandbox.executed if sql == "SELECT nope FROM singer"]
    assert len(executed_repairs) == 1  # the repeated repair is never executed again
    assert sum(f.error_after == "repeats an earlier repair" for f in trace.fixes) == 3


async def test_duplicate_errors_are_fixed_once_and_keep_their_votes(tiny_db, sandbox, scripted):
    client = scripted(base_script(**{"icl/direct": lambda r: sql_reply(BROKEN)}))
    scaling = SMALL.model_copy(update={"k": {"icl/direct": 3}})
    prediction = await pipeline(client, sandbox, scaling).answer(task(tiny_db))
    assert client.calls["fixer"] == 1
    assert sum("fix:1" in c.lineage for c in prediction.candidates) == 3


async def test_revisor_runs_on_edit_verdicts_and_adherence_is_traced(tiny_db, sandbox, scripted):
    critic = lambda r: (
        critique("edit", 3, "missing_filter", "filter on France")
        if reviewed_sql(r) == WRONG
        else critique()
    )
    client = scripted(base_script(**{"icl/direct": lambda r: sql_reply(WRONG), "critic": critic}))
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert client.calls["revisor"] == 1
    revised = [c for c in prediction.candidates if "revise:1" in c.lineage]
    assert revised[0].sql == RIGHT and revised[0].producer.startswith("icl/direct")
    assert trace.revisions[0].adhered
    revisor_prompt = next(r for a, r in client.requests if a == "revisor").messages[-1].content
    assert (
        "missing filter" in revisor_prompt and RIGHT in revisor_prompt
    )  # critique + cross-bucket summary


async def test_complexity_at_threshold_forces_retry_and_resynthesis(tiny_db, sandbox, scripted):
    client = scripted(
        base_script(
            critic=lambda r: critique(
                "edit", 7, "wrong_join", "x", "join through orders", "correction"
            )
        )
    )
    scaling = SMALL.model_copy(update={"resynth_max_passes": 1, "complexity_retry_threshold": 7})
    prediction, trace = await pipeline(client, sandbox, scaling).answer_with_trace(task(tiny_db))
    assert all(c.verdict == "retry" and c.forced for c in trace.critiques)
    assert client.calls["revisor"] == 0  # retry is not an edit
    assert "critique.forced_retry" in labels(trace) and "resynthesis" in labels(trace)
    resynth = [c for c in prediction.candidates if "resynth:1" in c.lineage]
    assert len(resynth) == 4  # k_resynth=1 per generator, 4 generators
    later_prompt = [r for a, r in client.requests if a == "icl/cot"][-1].messages[-1].content
    assert "## Corrections" in later_prompt and "join through orders" in later_prompt


async def test_complexity_below_threshold_is_not_forced(tiny_db, sandbox, scripted):
    client = scripted(base_script(critic=lambda r: critique("accept", 6)))
    _, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert [c.verdict for c in trace.critiques] == ["accept"] and not trace.critiques[0].forced
    assert "resynthesis" not in labels(trace)


@pytest.mark.parametrize(
    ("k_icl", "k_resynth", "per_generator"), [(1, None, 1), (2, None, 1), (6, None, 3), (6, 2, 2)]
)
def test_resynthesis_width_follows_the_source_rule_unless_set(k_icl, k_resynth, per_generator):
    scaling = FullWidthScaling(k={"reasoning": 1, **icl(k_icl)}, k_resynth=k_resynth)
    jobs = resynthesis_jobs(scaling, pass_no=1)
    assert len(jobs) == per_generator * 4  # max(1, largest k // 2) when unset


async def test_resynthesis_stops_at_its_cap(tiny_db, sandbox, scripted):
    # Every round produces a new result, and the critic always asks for a retry.
    counter = iter(range(1, 1000))
    fresh = lambda r: [sql_reply(f"SELECT {next(counter)}") for _ in range(r.n)]
    script = base_script(critic=lambda r: critique("retry", 9, "other"))
    script.update({k: fresh for k in ("icl/direct", "icl/cot", "icl/decompose")})
    client = scripted(script)
    scaling = SMALL.model_copy(update={"resynth_max_passes": 2})
    prediction, trace = await pipeline(client, sandbox, scaling).answer_with_trace(task(tiny_db))
    assert labels(trace).count("resynthesis") == 2
    lineage = {
        step for c in prediction.candidates for step in c.lineage if step.startswith("resynth")
    }
    assert lineage == {"resynth:1", "resynth:2"}
    assert client.calls["reasoning"] == 3  # first wave + 2 passes


async def test_shared_error_class_without_acceptance_triggers_resynthesis(
    tiny_db, sandbox, scripted
):
    client = scripted(
        base_script(
            **{
                "icl/direct": lambda r: sql_reply(WRONG),
                "icl/cot": lambda r: sql_reply(OTHER),
                "critic": lambda r: critique("edit", 3, "missing_filter"),
                "revisor": lambda r: sql_reply(WRONG),
            }
        )
    )
    scaling = SMALL.model_copy(update={"resynth_max_passes": 1})
    _, trace = await pipeline(client, sandbox, scaling).answer_with_trace(task(tiny_db))
    resynth = [d for d in trace.decisions if d.label == "resynthesis"]
    assert resynth and resynth[0].features["reason"] == "shared_error_class"
    assert trace.lessons[0].avoid[0].value == "missing_filter"


async def test_an_accepted_bucket_prevents_shared_class_resynthesis(tiny_db, sandbox, scripted):
    def critic(r):
        return critique() if reviewed_sql(r) == RIGHT else critique("edit", 3, "missing_filter")

    client = scripted(
        base_script(
            **{
                "icl/direct": lambda r: sql_reply(WRONG),
                "icl/cot": lambda r: sql_reply(OTHER),
                "critic": critic,
                "revisor": lambda r: sql_reply(WRONG),
            }
        )
    )
    _, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert "resynthesis" not in labels(trace)


async def test_tournament_picks_the_selectors_winner_over_the_majority(tiny_db, sandbox, scripted):
    def selector(r):
        text = r.messages[-1].content
        a = text.split("Query A:")[1].split("Query B:")[0]
        return json.dumps({"reason": "", "winner": "A" if RIGHT in a else "B"})

    client = scripted(
        base_script(
            **{
                "reasoning": lambda r: f"<sql>{WRONG}</sql>",
                "icl/direct": lambda r: sql_reply(WRONG),
                "icl/cot": lambda r: sql_reply(OTHER),
                "selector": selector,
            }
        )
    )
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert client.calls["selector"] == 6  # 3 buckets: round robin, each pair in both orders
    assert prediction.sql == RIGHT
    assert trace.ranking[0] == prediction.exec_result.hash


async def test_a_configured_majority_share_skips_the_selector(tiny_db, sandbox, scripted):
    client = scripted(
        base_script(
            **{
                "reasoning": lambda r: f"<sql>{WRONG}</sql>",
                "icl/direct": lambda r: sql_reply(WRONG),
                "icl/cot": lambda r: sql_reply(OTHER),
            }
        )
    )
    settings = PipelineSettings(tournament=TournamentSettings(majority_share=0.5))
    prediction, trace = await pipeline(client, sandbox, settings=settings).answer_with_trace(
        task(tiny_db)
    )
    assert client.calls["selector"] == 0 and prediction.sql == WRONG  # 2 of the 4 first candidates
    assert "majority_shortcut" in labels(trace)


async def test_selector_failure_falls_back_to_majority_vote(tiny_db, sandbox, scripted):
    client = scripted(
        base_script(
            **{
                "reasoning": lambda r: f"<sql>{WRONG}</sql>",
                "icl/direct": lambda r: sql_reply(WRONG),
                "selector": lambda r: ModelTimeout("slow"),
            }
        )
    )
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert prediction.sql == WRONG  # 2 votes against 2: tie broken by the reasoning producer
    assert prediction.producer.startswith("reasoning")
    assert "selector_failed" in prediction.degradation_reasons and prediction.degraded


async def test_tournament_disabled_is_majority_vote_without_selector(tiny_db, sandbox, scripted):
    wrong = lambda r: sql_reply(WRONG)
    client = scripted(
        base_script(**{"icl/direct": wrong, "icl/cot": wrong, "icl/decompose": wrong})
    )
    scaling = SMALL.model_copy(update={"tournament_enabled": False})
    prediction = await pipeline(client, sandbox, scaling).answer(task(tiny_db))
    assert client.calls["selector"] == 0 and prediction.sql == WRONG


@pytest.mark.parametrize(
    ("agent", "label"),
    [
        ("extractor", "extractor_failed"),
        ("icl/cot", "generator_failed"),
        ("critic", "critic_failed"),
    ],
)
async def test_single_agent_failures_degrade_but_answer(tiny_db, sandbox, scripted, agent, label):
    client = scripted(base_script(**{agent: lambda r: ModelUnavailable("down")}))
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert prediction.sql == RIGHT and prediction.error is None
    assert label in prediction.degradation_reasons and trace.degraded
    if agent == "extractor":
        assert trace.context.understanding.literals == ()


async def test_fixer_failure_keeps_pre_refinement_candidates(tiny_db, sandbox, scripted):
    client = scripted(
        base_script(
            **{"icl/direct": lambda r: sql_reply(BROKEN), "fixer": lambda r: ModelUnavailable("x")}
        )
    )
    prediction = await pipeline(client, sandbox).answer(task(tiny_db))
    assert "fixer_failed" in prediction.degradation_reasons
    assert any(c.sql == BROKEN for c in prediction.candidates) and prediction.sql == RIGHT


async def test_revisor_failure_skips_the_pass(tiny_db, sandbox, scripted):
    client = scripted(
        base_script(
            **{
                "icl/direct": lambda r: sql_reply(WRONG),
                "critic": lambda r: critique("edit", 3, "missing_filter"),
                "revisor": lambda r: ModelUnavailable("x"),
            }
        )
    )
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert "revisor_failed" in prediction.degradation_reasons
    assert not any("revise:1" in c.lineage for c in prediction.candidates)
    assert trace.revisions and not trace.revisions[0].adhered


async def test_retriever_failures_degrade_to_empty_hits(tiny_db, sandbox, scripted):
    class Broken:
        def search(self, *a, **k):
            raise RuntimeError("index missing")

    client = scripted(base_script())
    p = pipeline(client, sandbox, cell_retriever=Broken(), example_retriever=Broken())
    prediction, trace = await p.answer_with_trace(task(tiny_db))
    assert {"cell_retriever_failed", "example_retriever_failed"} <= set(
        prediction.degradation_reasons
    )
    assert trace.context.cell_hits == () and prediction.sql == RIGHT
    assert prediction.retrieval == ()  # a failed retriever did not serve the question


async def test_prediction_names_the_retrievers_that_served(tiny_db, sandbox, scripted):
    from pipelines.indexing.errors import IndexNotBuilt

    class NoHits:  # served: its index exists, it found nothing
        def search(self, db_id, query, k=5):
            return []

    class NotIndexed:
        def search(self, *a, **k):
            raise IndexNotBuilt("the example index", "/indexes")

    client = scripted(base_script())
    prediction, trace = await pipeline(
        client, sandbox, cell_retriever=NoHits(), example_retriever=NotIndexed()
    ).answer_with_trace(task(tiny_db))
    assert prediction.retrieval == ("cells",) and trace.context.retrieval == ("cells",)
    assert "example_retriever_unavailable" in labels(trace) and not prediction.degraded
    without = await pipeline(scripted(base_script()), sandbox).answer(task(tiny_db))
    assert without.retrieval == ()


async def test_every_generator_failing_is_the_only_hard_failure(tiny_db, sandbox, scripted):
    down = lambda r: ModelUnavailable("down")
    client = scripted(
        base_script(**{k: down for k in ("reasoning", "icl/direct", "icl/cot", "icl/decompose")})
    )
    prediction = await pipeline(client, sandbox).answer(task(tiny_db))
    assert prediction.error and prediction.sql == "" and prediction.candidates == ()


async def test_global_timeout_returns_best_so_far_degraded(tiny_db, sandbox, scripted):
    class SlowCritic:
        def __init__(self):
            self.inner = scripted(base_script(**{"icl/direct": lambda r: sql_reply(WRONG)}))

        async def chat(self, request, *, role="generator", budget=None):
            if role == "critic":
                await asyncio.sleep(10)
            return await self.inner.chat(request, role=role, budget=budget)

    scaling = SMALL.model_copy(update={"global_timeout_s": 0.5})
    prediction = await pipeline(SlowCritic(), sandbox, scaling).answer(task(tiny_db))
    assert prediction.degraded and "global_timeout" in prediction.degradation_reasons
    assert prediction.sql == RIGHT and prediction.error is None  # 3 of 4 candidates agree
    assert prediction.latency_s < 5


async def test_a_timeout_during_synthesis_answers_from_the_generators_that_finished(
    tiny_db, sandbox, scripted
):
    class SlowDecomposer:
        def __init__(self):
            self.inner = scripted(base_script(**{"icl/direct": lambda r: sql_reply(WRONG)}))

        async def chat(self, request, *, role="generator", budget=None):
            if "\nYou decompose" in request.messages[-1].content:
                await asyncio.sleep(10)  # a CPU model still writing when the clock runs out
            return await self.inner.chat(request, role=role, budget=budget)

    scaling = SMALL.model_copy(update={"global_timeout_s": 0.5})
    prediction = await pipeline(SlowDecomposer(), sandbox, scaling).answer(task(tiny_db))
    assert prediction.degraded and "global_timeout" in prediction.degradation_reasons
    assert prediction.error is None and prediction.sql == RIGHT  # reasoning + cot agree
    assert [c.producer.split("/T=")[0] for c in prediction.candidates] == [
        "reasoning",
        "icl/direct",
        "icl/cot",
    ]
    assert prediction.latency_s < 5


async def test_budget_exceeded_returns_best_so_far_degraded(tiny_db, sandbox, scripted):
    client = scripted(base_script(critic=lambda r: BudgetExceeded("token budget exhausted")))
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert prediction.degraded and prediction.degradation_reasons == ("budget_exceeded",)
    assert prediction.sql == RIGHT


async def test_real_token_budget_stops_the_search(tiny_db, sandbox, scripted):
    counter = iter(range(1, 1000))
    fresh = lambda r: [sql_reply(f"SELECT {next(counter)}") for _ in range(r.n)]
    client = scripted(
        base_script(
            **{"icl/direct": fresh, "icl/cot": fresh, "critic": lambda r: critique("retry", 9)}
        )
    )
    scaling = SMALL.model_copy(update={"token_budget": 800})  # each scripted call costs 100+ tokens
    prediction = await pipeline(client, sandbox, scaling).answer(task(tiny_db))
    assert "budget_exceeded" in prediction.degradation_reasons
    assert prediction.usage.total_tokens <= 800 + 200  # at most the calls in flight overshoot


@pytest.mark.parametrize(
    "scaling",
    [
        SMALL,
        FullWidthScaling(),
        FullWidthScaling(k=icl(1), fixer_max_passes=1, refinement_max_passes=2),
    ],
)
async def test_llm_calls_never_exceed_the_scaling_allowance(tiny_db, sandbox, scripted, scaling):
    # Adversarial: every sample differs, errors half the time, critics ask for edits, revisions differ.
    counter = iter(range(1, 100000))

    def fresh(r):
        return [
            sql_reply(f"SELECT {n}" if (n := next(counter)) % 2 else f"SELECT x{n}")
            for _ in range(r.n)
        ]

    script = base_script(critic=lambda r: critique("edit", 3, "other"), fixer=fresh, revisor=fresh)
    script.update({k: fresh for k in ("reasoning", "icl/direct", "icl/cot", "icl/decompose")})
    script["reasoning"] = lambda r: [f"<sql>SELECT {next(counter)}</sql>" for _ in range(r.n)]
    client = scripted(script)
    settings = PipelineSettings(tournament=TournamentSettings(max_finalists=4))
    prediction = await pipeline(client, sandbox, scaling, settings).answer(task(tiny_db))
    allowed = call_allowance(scaling, first_wave=len(synthesis_jobs(scaling)), max_finalists=4)
    assert 0 < len(client.requests) <= allowed
    assert prediction.usage.calls == len(client.requests)
    assert "budget_exceeded" not in prediction.degradation_reasons  # the cap was never hit


async def test_router_stops_early_when_the_probe_agrees(tiny_db, sandbox, scripted):
    client = scripted(base_script())
    settings = PipelineSettings(router=RouterSettings(probe_k={"reasoning": 1, "icl/direct": 1}))
    scaling = FullWidthScaling(router_enabled=True)
    prediction, trace = await pipeline(client, sandbox, scaling, settings).answer_with_trace(
        task(tiny_db)
    )
    assert len(prediction.candidates) == 2 and prediction.sql == RIGHT
    assert trace.route.stopped_early and "router.stop_early" in labels(trace)
    assert client.calls["critic"] == 0 and client.calls["selector"] == 0


async def test_router_judges_the_schema_the_generators_see(tiny_db, sandbox, scripted):
    # A schema over max_schema_tokens is focused on the tables the question names (singer, not
    # concert), and the router's schema-size signal counts those.
    settings = PipelineSettings(
        understanding=UnderstandingSettings(max_schema_tokens=100),
        router=RouterSettings(probe_k={"reasoning": 1, "icl/direct": 1}),
    )
    client = scripted(base_script())
    routed = pipeline(client, sandbox, FullWidthScaling(router_enabled=True), settings)
    _, trace = await routed.answer_with_trace(task(tiny_db))
    assert "schema.focused" in labels(trace) and trace.route.features["tables"] == 1
    assert "concert" not in "\n".join(m.content for m in client.requests[-1][1].messages)


async def test_router_widens_when_the_probe_disagrees(tiny_db, sandbox, scripted):
    client = scripted(base_script(**{"icl/direct": lambda r: sql_reply(WRONG)}))
    settings = PipelineSettings(
        router=RouterSettings(
            profiles={"narrow": {"k": icl(1)}, "standard": {"k": icl(2)}, "wide": {"k": icl(3)}}
        )
    )
    scaling = FullWidthScaling(router_enabled=True)
    prediction, trace = await pipeline(client, sandbox, scaling, settings).answer_with_trace(
        task(tiny_db)
    )
    assert not trace.route.stopped_early and "router.widen" in labels(trace)
    escalated = {"narrow": "standard", "standard": "wide", "wide": "wide"}[trace.route.tier]
    k_icl = {"standard": 2, "wide": 3}[escalated]
    generated = [c for c in prediction.candidates if c.lineage == ("gen",)]
    assert (
        trace.route.profile == escalated and len(generated) == 2 + k_icl * 3
    )  # probe reused, not redrawn; the profile's k leaves reasoning at its configured 2


async def test_trace_is_written_and_a_failing_sink_warns_once(
    tiny_db, sandbox, scripted, tmp_path, caplog
):
    class Exploding:
        def write(self, trace):
            raise OSError("disk full")

        def close(self):
            pass

    client = scripted(base_script())
    jsonl = JsonlTraceSink(tmp_path)
    p = pipeline(client, sandbox, sinks=(Exploding(), jsonl))
    with caplog.at_level(logging.WARNING):
        first = await p.answer(task(tiny_db))
        await p.answer(task(tiny_db).model_copy(update={"task_id": "q2"}))
    assert sum("disk full" in r.getMessage() for r in caplog.records) == 1
    traces = read_traces(jsonl.traces_path)
    assert [t.task_id for t in traces] == ["q1", "q2"] and first.trace_path.endswith(
        "traces.jsonl#q1"
    )
    chat = [e for e in traces[0].events if e.attributes.get("gen_ai.operation.name") == "chat"]
    assert chat and all("gen_ai.usage.input_tokens" in e.attributes for e in chat)
    assert {e.surface for e in traces[0].events} == {"cognitive", "operational"}


async def test_unusable_replies_are_noted_but_do_not_degrade(tiny_db, sandbox, scripted):
    client = scripted(
        base_script(
            **{
                "icl/direct": lambda r: sql_reply(BROKEN),
                "fixer": lambda r: "I would rewrite it.",
                "icl/cot": lambda r: "no idea",
            }
        )
    )
    prediction, trace = await pipeline(client, sandbox).answer_with_trace(task(tiny_db))
    assert {"fixer_unusable", "generator_unusable"} <= set(labels(trace))
    assert not prediction.degraded and prediction.sql == RIGHT
    assert trace.fixes[0].sql_after is None and not trace.fixes[0].succeeded


async def test_refinement_passes_stop_at_their_cap(tiny_db, sandbox, scripted):
    counter = iter(range(1, 1000))
    client = scripted(
        base_script(
            critic=lambda r: critique("edit", 2, "other"),
            revisor=lambda r: sql_reply(f"SELECT {next(counter)}"),
        )
    )
    scaling = SMALL.model_copy(update={"refinement_max_passes": 2, "resynth_max_passes": 0})
    prediction, trace = await pipeline(client, sandbox, scaling).answer_with_trace(task(tiny_db))
    passes = {x for c in prediction.candidates for x in c.lineage if x.startswith("revise")}
    assert passes == {"revise:1", "revise:2"}
    assert (
        client.calls["critic"] == 2 and client.calls["revisor"] == 2
    )  # one bucket, then its revision
    assert list(dict.fromkeys(b.stage for b in trace.buckets)) == ["refine:1", "refine:2", "final"]


async def test_budget_exhaustion_cancels_sibling_calls(tiny_db, sandbox, scripted):
    started, finished = [], []

    class SlowSiblings:
        inner = scripted(base_script())

        async def chat(self, request, *, role="generator", budget=None):
            if request.messages[-1].content.startswith("You reason"):
                raise BudgetExceeded("spent")
            if role == "generator":
                started.append(1)
                await asyncio.sleep(0.5)
                finished.append(1)
            return await self.inner.chat(request, role=role, budget=budget)

    prediction = await pipeline(SlowSiblings(), sandbox).answer(task(tiny_db))
    await asyncio.sleep(0.7)
    assert prediction.degradation_reasons == ("budget_exceeded",) and prediction.error
    assert started and not finished  # the other generators were cancelled, not left running


def test_invalid_router_profile_fails_at_construction(sandbox, scripted):
    from pipelines.agents.errors import PipelineConfigError

    settings = PipelineSettings(
        router=RouterSettings(profiles={"narrow": {"k": {"reasoning": 0, **icl(0)}}})
    )
    with pytest.raises(PipelineConfigError, match="router profile 'narrow'"):
        pipeline(scripted({}), sandbox, FullWidthScaling(router_enabled=True), settings)
    with pytest.raises(ValueError, match="takes FullWidthScaling"):
        pipeline(scripted({}), sandbox, SinglePassScaling())
