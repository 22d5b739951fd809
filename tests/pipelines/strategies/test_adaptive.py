"""AdaptivePipeline with a scripted model on a real (tiny) SQLite database: early stop, each
escalation step, the call allowance on every path, retrieval, and degradation."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from models.errors import ModelUnavailable
from pipelines.contracts import CellHit, ExampleHit, Task
from pipelines.factory import build_pipeline
from pipelines.indexing.errors import IndexNotBuilt
from pipelines.strategies.adaptive import AdaptivePipeline
from pipelines.strategies.adaptive_settings import AdaptiveScaling, WidenStep

RIGHT = "SELECT count(*) FROM singer WHERE country = 'France'"  # 2
WRONG = "SELECT count(*) FROM singer"  # 5
OTHER = "SELECT count(*) FROM singer WHERE age > 30"  # 3
EMPTY = "SELECT name FROM singer WHERE country = 'Peru'"
BROKEN = "SELECT count(*) FROM singers WHERE country = 'France'"  # no such table


def sql(text: str) -> str:
    return f"```sql\n{text}\n```"


def critique(verdict="edit") -> str:
    return json.dumps(
        {
            "error_class": "missing_filter",
            "suggested_fix": "filter on France",
            "generator_feedback": "",
            "feedback_kind": "warning",
            "complexity": 2,
            "verdict": verdict,
        }
    )


def scaling(**adaptive) -> AdaptiveScaling:
    """The settings under test; a pool still split is decided by the vote unless ``select`` says."""
    adaptive.setdefault("select", "vote")
    return AdaptiveScaling(**adaptive, global_timeout_s=30)


def task(db) -> Task:
    return Task(task_id="t1", question="How many singers are from France?", db=db)


def first_wave(greedy: str, samples: list[str]):
    """Script for the single-pass prompt: the greedy reply, then the samples, then ``widen`` replies."""

    def reply(request):
        if request.temperature == 0.0:
            return sql(greedy)
        return [sql(s) for s in itertools.islice(itertools.cycle(samples), request.n)]

    return reply


def pipeline(client, sandbox, scaling_cfg, **kw) -> AdaptivePipeline:
    return AdaptivePipeline(client=client, sandbox=sandbox, scaling=scaling_cfg, **kw)


async def test_clear_majority_stops_after_the_first_wave(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": first_wave(RIGHT, [RIGHT, RIGHT, RIGHT, WRONG])})
    prediction = await pipeline(client, sandbox, scaling()).answer(task(tiny_db))

    assert prediction.exec_result.rows == ((2,),)
    assert prediction.answered_by == "first_wave"
    assert [s.step for s in prediction.steps] == ["first_wave"]
    assert prediction.steps[0].calls == 2 and prediction.usage.calls == 2
    greedy, samples = (r for _, r in client.requests)
    assert (greedy.n, greedy.temperature) == (1, 0.0) and (samples.n, samples.temperature) == (
        4,
        0.8,
    )
    assert greedy.grammar and greedy.grammar_optional  # the reply is one sql block, nothing else
    assert (
        greedy.messages == samples.messages
    )  # one prompt: the samples reuse the greedy's KV cache
    assert greedy.stop == ("\n```\n",)  # generation ends where the SQL ends
    assert (
        "CREATE TABLE singer" in greedy.messages[0].content and greedy.messages[0].role == "system"
    )


async def test_errors_go_to_the_fixer_with_the_engine_message(tiny_db, sandbox, scripted):
    client = scripted(
        {
            "single_pass": first_wave(BROKEN, [BROKEN, BROKEN, BROKEN, WRONG]),
            "fixer": lambda r: sql(RIGHT),
        }
    )
    prediction = await pipeline(client, sandbox, scaling()).answer(task(tiny_db))

    assert prediction.exec_result.rows == ((2,),)
    assert prediction.answered_by == "fix"
    assert [s.step for s in prediction.steps] == ["first_wave", "fix"]
    ((_, fix_request),) = [
        (a, r) for a, r in client.requests if a == "fixer"
    ]  # one repair per distinct SQL
    assert "no such table: singers" in fix_request.messages[-1].content
    # the fixer shares the first wave's system message (the schema), so its prompt is cached
    assert fix_request.messages[0] == client.requests[0][1].messages[0]


async def test_a_misspelt_column_is_rewritten_from_the_schema_without_a_call(
    tiny_db, sandbox, scripted
):
    misspelt = "SELECT count(*) FROM singer WHERE Country_ = 'France'"  # no such column: Country_
    client = scripted({"single_pass": first_wave(misspelt, [misspelt, misspelt, RIGHT, WRONG])})
    prediction = await pipeline(client, sandbox, scaling()).answer(task(tiny_db))

    assert prediction.exec_result.rows == ((2,),)
    assert prediction.answered_by == "first_wave"  # three rewrites + RIGHT: a clear majority
    assert client.calls == {"single_pass": 2}  # no fixer call
    rewrites = [c for c in prediction.candidates if "repair" in c.lineage]
    assert len(rewrites) == 3 and {c.producer for c in rewrites} == {
        "first_wave/greedy",
        "first_wave/T=0.8",
    }
    assert all(c.exec_result.ok for c in rewrites)


async def test_a_string_broken_by_an_apostrophe_is_repaired_before_its_column(
    tiny_db, sandbox, scripted
):
    # a syntax error (the backslash) hiding a misspelt column: quote repair, then column repair
    broken = "SELECT count(*) FROM singer WHERE Country_ = 'France' AND name != 'O\\'Brien'"
    client = scripted({"single_pass": first_wave(broken, [broken, broken, RIGHT, WRONG])})
    prediction = await pipeline(client, sandbox, scaling()).answer(task(tiny_db))

    assert prediction.exec_result.rows == ((2,),)
    assert prediction.answered_by == "first_wave" and client.calls == {"single_pass": 2}
    rewrites = [c for c in prediction.candidates if "repair" in c.lineage]
    assert len(rewrites) == 3 and all(c.exec_result.rows == ((2,),) for c in rewrites)
    assert all("'O''Brien'" in c.sql and "country" in c.sql for c in rewrites)


async def test_with_quotes_not_listed_the_broken_string_stays_an_error(tiny_db, sandbox, scripted):
    broken = "SELECT count(*) FROM singer WHERE country = 'France' AND name != 'O\\'Brien'"
    client = scripted(
        {"single_pass": first_wave(broken, [broken, broken, RIGHT, WRONG]), "fixer": lambda r: ""}
    )
    prediction = await pipeline(
        client, sandbox, scaling(repairs=("joins", "columns", "values"))
    ).answer(task(tiny_db))

    assert not any("O''Brien" in c.sql for c in prediction.candidates)
    assert all(not c.exec_result.ok for c in prediction.candidates if c.sql == broken)


async def test_past_the_budget_an_answered_question_gets_no_rewrite(tiny_db, sandbox, scripted):
    misspelt = "SELECT count(*) FROM singer WHERE Country_ = 'France'"
    client = scripted({"single_pass": first_wave(RIGHT, [misspelt, misspelt, RIGHT, WRONG])})
    cfg = scaling(escalate_within_s=1e-6)
    prediction, trace = await pipeline(client, sandbox, cfg).answer_with_trace(task(tiny_db))

    assert not any("repair" in c.lineage for c in prediction.candidates)
    # the two misspelt votes stay errors: the vote is between RIGHT and WRONG, undegraded
    assert prediction.sql == RIGHT and not prediction.degraded
    assert sum(c.sql == misspelt and not c.exec_result.ok for c in prediction.candidates) == 2
    (decision,) = [d for d in trace.decisions if d.label == "adaptive.out_of_time"]
    assert decision.stage == "column_repair"


async def test_past_the_budget_a_question_with_no_answer_is_repaired_till_its_first(
    tiny_db, sandbox, scripted
):
    misspelt = "SELECT count(*) FROM singer WHERE Country_ = 'France'"
    other_misspelt = "SELECT count(*) FROM singer WHERE Countryy = 'France'"
    client = scripted(
        {"single_pass": first_wave(misspelt, [misspelt, other_misspelt]), "fixer": lambda r: ""}
    )
    cfg = scaling(escalate_within_s=1e-6)
    prediction, trace = await pipeline(client, sandbox, cfg).answer_with_trace(task(tiny_db))

    # the greedy's error, the only candidate, is rewritten; the samples' errors come after an
    # answer and are not
    (rewrite,) = [c for c in prediction.candidates if "repair" in c.lineage]
    assert rewrite.producer == "first_wave/greedy" and rewrite.exec_result.rows == ((2,),)
    assert prediction.exec_result.rows == ((2,),) and client.calls == {"single_pass": 2}
    assert not any(c.sql == other_misspelt and c.exec_result.ok for c in prediction.candidates)
    (decision,) = [d for d in trace.decisions if d.label == "adaptive.out_of_time"]
    assert decision.stage == "column_repair"


async def test_with_no_repair_of_an_error_listed_the_fixer_gets_the_error(
    tiny_db, sandbox, scripted
):
    misspelt = "SELECT count(*) FROM singer WHERE Country_ = 'France'"
    client = scripted(
        {
            "single_pass": first_wave(misspelt, [misspelt, misspelt, RIGHT, WRONG]),
            "fixer": lambda r: sql(RIGHT),
        }
    )
    prediction = await pipeline(client, sandbox, scaling(repairs=("joins", "values"))).answer(
        task(tiny_db)
    )

    assert client.calls["fixer"] == 1
    assert not any("repair" in c.lineage for c in prediction.candidates)
    assert prediction.exec_result.rows == ((2,),)


async def test_a_split_pool_widens_with_the_configured_variant(tiny_db, sandbox, scripted):
    cells = type(
        "Cells",
        (),
        {
            "search_many": lambda self, db_id, queries, k=5, mode="hybrid", threshold=None: [
                CellHit(
                    table="singer", column="country", value="France", score=0.9, source="hybrid"
                )
            ]
        },
    )()
    examples = type(
        "Examples",
        (),
        {
            "search": lambda self, skeleton, k=5, exclude_db=None, threshold=None: [
                ExampleHit(
                    question="How many heads are older than 56?",
                    skeleton=skeleton,
                    sql="SELECT count(*) FROM head WHERE age > 56",
                    db_id="x",
                    score=0.1,
                )
            ]
        },
    )()

    def reply(request):
        user = request.messages[-1].content
        if "head WHERE age > 56" not in user:  # the widening variant: no examples
            return [sql(RIGHT)] * request.n
        return first_wave(WRONG, [RIGHT, OTHER, WRONG, EMPTY])(request)

    client = scripted({"single_pass": reply})
    p = pipeline(
        client,
        sandbox,
        scaling(widen=(WidenStep(n=6, examples=False),), revise=False),
        cell_retriever=cells,
        example_retriever=examples,
    )
    prediction, trace = await p.answer_with_trace(task(tiny_db))

    assert prediction.retrieval == ("cells", "examples")
    # the trace keeps what the prompts were given
    assert [h.value for h in trace.context.cell_hits] == ["France"]
    assert [h.db_id for h in trace.context.example_hits] == ["x"]
    first = client.requests[0][1].messages[-1].content
    assert "singer.country = 'France'" in first and "head WHERE age > 56" in first
    widen = client.requests[-1][1]
    assert (
        widen.n == 6
        and widen.temperature == 1.0
        and "singer.country = 'France'" in widen.messages[-1].content
    )
    assert prediction.answered_by == "widen" and prediction.exec_result.rows == ((2,),)
    assert {c.producer for c in prediction.candidates} >= {"first_wave/greedy", "widen/cells/T=1"}


@pytest.mark.parametrize(
    ("samples", "widens"),
    [
        ([OTHER, EMPTY, BROKEN, BROKEN], False),  # no two agree: the greedy answer stands
        ([WRONG, OTHER, EMPTY, BROKEN], True),  # two agree on WRONG: worth widening
    ],
)
async def test_a_pool_where_no_two_candidates_agree_is_not_widened(
    tiny_db, sandbox, scripted, samples, widens
):
    def reply(request):
        if request.n == 6:  # the widening
            return [sql(RIGHT)] * request.n
        return first_wave(WRONG, samples)(request)

    client = scripted({"single_pass": reply})
    cfg = scaling(widen=(WidenStep(n=6),), widen_min_votes=2, fix_max=0)
    prediction, trace = await pipeline(client, sandbox, cfg).answer_with_trace(task(tiny_db))

    assert ("widen" in [s.step for s in prediction.steps]) is widens
    assert prediction.sql == (RIGHT if widens else WRONG)
    skipped = [d for d in trace.decisions if d.label == "adaptive.no_agreement"]
    assert [d.features["largest"] for d in skipped] == ([] if widens else [1])


async def test_an_empty_top_bucket_is_critiqued_and_revised(tiny_db, sandbox, scripted):
    client = scripted(
        {
            "single_pass": first_wave(EMPTY, [EMPTY]),
            "critic": lambda r: critique("edit"),
            "revisor": lambda r: sql(RIGHT),
        }
    )
    prediction = await pipeline(
        client, sandbox, scaling(widen=(), revise=True, tournament=False)
    ).answer(task(tiny_db))

    assert client.calls["critic"] == 1 and client.calls["revisor"] == 1
    assert [s.step for s in prediction.steps] == ["first_wave", "revise"]
    assert any(c.sql == RIGHT and "revise:1" in c.lineage for c in prediction.candidates)


async def test_a_close_margin_goes_to_a_two_bucket_tournament_in_both_orders(
    tiny_db, sandbox, scripted
):
    def selector(request):
        text = request.messages[-1].content
        a = text.split("Query A:")[1].split("Query B:")[0]
        return json.dumps({"reason": "filters on France", "winner": "A" if "France" in a else "B"})

    client = scripted(
        {
            "single_pass": first_wave(
                WRONG, [RIGHT, WRONG, OTHER, RIGHT, WRONG, OTHER, RIGHT, WRONG]
            ),
            "selector": selector,
        }
    )
    prediction = await pipeline(
        client, sandbox, scaling(widen=(), revise=False, tournament=True)
    ).answer(task(tiny_db))

    assert client.calls["selector"] == 2  # one pair, judged in both orders
    assert prediction.answered_by == "tournament" and prediction.exec_result.rows == ((2,),)


async def test_without_early_stop_every_enabled_step_runs(tiny_db, sandbox, scripted):
    client = scripted(
        {
            "single_pass": first_wave(RIGHT, [RIGHT, RIGHT, RIGHT, BROKEN]),
            "fixer": lambda r: sql(RIGHT),
        }
    )
    prediction = await pipeline(client, sandbox, scaling(early_stop=False, revise=False)).answer(
        task(tiny_db)
    )

    assert [s.step for s in prediction.steps] == ["first_wave", "fix", "widen"]
    assert prediction.exec_result.rows == ((2,),)


HARD_RIGHT = (
    "SELECT count(*) FROM singer WHERE age < (SELECT max(age) FROM singer) AND country = 'France'"
)


async def test_a_majority_on_hard_sql_answers_only_after_the_pool_was_widened(
    tiny_db, sandbox, scripted
):
    client = scripted({"single_pass": first_wave(HARD_RIGHT, [HARD_RIGHT] * 3 + [WRONG])})
    prediction, trace = await pipeline(
        client, sandbox, scaling(stop_max_hardness="medium")
    ).answer_with_trace(task(tiny_db))

    assert [s.step for s in prediction.steps] == ["first_wave", "widen"]
    assert prediction.answered_by == "widen" and prediction.exec_result.rows == ((1,),)
    (held,) = [d for d in trace.decisions if d.label == "adaptive.hard_majority"]
    assert held.stage == "first_wave" and held.features["hardness"] == "extra"


async def test_a_majority_on_easy_sql_stops_under_the_hardness_gate(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": first_wave(RIGHT, [RIGHT, RIGHT, RIGHT, WRONG])})
    prediction = await pipeline(client, sandbox, scaling(stop_max_hardness="medium")).answer(
        task(tiny_db)
    )

    assert [s.step for s in prediction.steps] == ["first_wave"]


async def test_by_default_every_clear_majority_answers(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": first_wave(HARD_RIGHT, [HARD_RIGHT] * 3 + [WRONG])})
    prediction = await pipeline(client, sandbox, scaling()).answer(task(tiny_db))

    assert [s.step for s in prediction.steps] == ["first_wave"]


async def test_without_a_widening_the_hardness_gate_has_nothing_to_wait_for(
    tiny_db, sandbox, scripted
):
    client = scripted({"single_pass": first_wave(HARD_RIGHT, [HARD_RIGHT] * 3 + [WRONG])})
    prediction = await pipeline(
        client, sandbox, scaling(stop_max_hardness="easy", widen=())
    ).answer(task(tiny_db))

    assert prediction.answered_by == "first_wave" and prediction.usage.calls == 2


@pytest.mark.parametrize(
    "adaptive",
    [
        {},
        {"early_stop": False},
        {"fix_max": 5, "widen": [WidenStep(n=2), WidenStep(n=2, examples=False, cells=False)]},
        {"tournament": True, "tournament_finalists": 3, "tournament_margin": 1.0},
        {"select": "likelihood", "select_max_sqls": 3},
        {"select": "likelihood", "early_stop": False, "fix_max": 2},
        {"stop_max_hardness": "easy", "fix_max": 2},
    ],
)
async def test_the_call_allowance_holds_on_the_most_expensive_path(
    tiny_db, sandbox, scripted, adaptive
):
    broken = itertools.count()

    def samples(request):  # every sample a different error or answer: nothing ever agrees
        return [
            sql(BROKEN.replace("France", f"x{next(broken)}"))
            if i % 2
            else sql(f"{WRONG} LIMIT {i}")
            for i in range(request.n)
        ]

    client = scripted(
        {
            "single_pass": samples,
            "fixer": lambda r: sql(f"SELECT {next(broken)}"),
            "critic": lambda r: critique("edit"),
            "revisor": lambda r: sql(EMPTY),
            "selector": lambda r: json.dumps({"reason": "-", "winner": "A"}),
            "likelihood": lambda sql: -0.5,
        }
    )
    adaptive_pipeline = pipeline(client, sandbox, scaling(**adaptive))
    prediction = await adaptive_pipeline.answer(task(tiny_db))

    assert "budget_exceeded" not in prediction.degradation_reasons
    assert 0 < prediction.usage.calls <= adaptive_pipeline.call_allowance()
    assert prediction.sql


def likelihood_of(best: str, rest: float = -2.0):
    """A model that finds ``best`` likeliest: each of its words at -0.1, every other SQL's at ``rest``."""
    return lambda text: -0.1 if text == best else rest


async def test_a_pool_still_split_goes_to_the_likelihood_of_each_distinct_sql(
    tiny_db, sandbox, scripted
):
    client = scripted(
        {
            "single_pass": first_wave(WRONG, [WRONG, RIGHT, OTHER, WRONG]),
            "likelihood": likelihood_of(RIGHT),
        }
    )
    cfg = scaling(select="likelihood", widen=(WidenStep(n=3, examples=False, cells=False),))
    prediction, trace = await pipeline(client, sandbox, cfg).answer_with_trace(task(tiny_db))

    # RIGHT has 2 of 8 votes (WRONG 4 + greedy): the vote would have taken WRONG
    assert prediction.exec_result.rows == ((2,),) and prediction.sql == RIGHT
    assert prediction.answered_by == "likelihood"
    assert [s.step for s in prediction.steps] == ["first_wave", "widen", "likelihood"]
    scoring = [r for a, r in client.requests if a == "likelihood"]
    assert sorted(r.grammar for r in scoring) == sorted(
        f"root ::= {json.dumps(sql(s))}" for s in (WRONG, RIGHT, OTHER)
    )  # one call per distinct SQL, each forced to that SQL in its fence
    widen = [r for a, r in client.requests if a == "single_pass"][-1]
    assert all(r.messages == widen.messages for r in scoring)  # the plain prompt, cached
    assert prediction.steps[-1].calls == 3
    decision = next(d for d in trace.decisions if d.label == "likelihood")
    assert decision.features["scored"] == 3


async def test_past_the_escalation_budget_no_step_starts_and_the_vote_answers_undegraded(
    tiny_db, sandbox, scripted
):
    client = scripted(
        {
            "single_pass": first_wave(WRONG, [WRONG, RIGHT, OTHER, WRONG]),
            "likelihood": likelihood_of(RIGHT),
        }
    )
    cfg = scaling(select="likelihood", escalate_within_s=1e-6)
    prediction, trace = await pipeline(client, sandbox, cfg).answer_with_trace(task(tiny_db))

    # the same pool widened and scored picks RIGHT (the test above); here WRONG's 3 votes win
    assert prediction.sql == WRONG and prediction.answered_by == "first_wave"
    assert [s.step for s in prediction.steps] == ["first_wave"]
    assert client.calls == {"single_pass": 2}
    assert not prediction.degraded
    (decision,) = [d for d in trace.decisions if d.label == "adaptive.out_of_time"]
    assert decision.stage == "widen" and decision.features["limit_s"] == 1e-6


async def test_a_step_started_within_the_budget_finishes_and_the_next_one_does_not_start(
    tiny_db, sandbox, scripted
):
    script = scripted(
        {
            "single_pass": first_wave(WRONG, [WRONG, RIGHT, OTHER, WRONG]),
            "likelihood": likelihood_of(RIGHT),
        }
    )

    class SlowWidening:
        requests = script.requests

        async def chat(self, request, *, role="generator", budget=None):
            if request.n == 3:  # the widening
                await asyncio.sleep(0.5)
            return await script.chat(request, role=role, budget=budget)

    cfg = scaling(
        select="likelihood",
        widen=(WidenStep(n=3, examples=False, cells=False),),
        escalate_within_s=0.4,
    )
    prediction, trace = await pipeline(SlowWidening(), sandbox, cfg).answer_with_trace(
        task(tiny_db)
    )

    assert [s.step for s in prediction.steps] == ["first_wave", "widen"]
    assert prediction.steps[-1].seconds >= 0.5  # not cut off
    assert script.calls["likelihood"] == 0 and not prediction.degraded
    assert prediction.answered_by == "widen"
    (decision,) = [d for d in trace.decisions if d.label == "adaptive.out_of_time"]
    assert decision.stage == "likelihood" and decision.features["spent_s"] >= 0.5


async def test_a_clear_majority_is_not_scored(tiny_db, sandbox, scripted):
    client = scripted(
        {
            "single_pass": first_wave(RIGHT, [RIGHT, RIGHT, RIGHT, WRONG]),
            "likelihood": likelihood_of(WRONG),
        }
    )
    prediction = await pipeline(client, sandbox, scaling(select="likelihood")).answer(task(tiny_db))

    assert prediction.answered_by == "first_wave" and prediction.sql == RIGHT
    assert client.calls["likelihood"] == 0


async def test_likelihood_ties_go_to_the_larger_bucket(tiny_db, sandbox, scripted):
    client = scripted(
        {
            "single_pass": first_wave(WRONG, [WRONG, RIGHT, OTHER, WRONG]),
            "likelihood": lambda text: -1.0,
        }
    )
    cfg = scaling(select="likelihood", widen=())
    prediction = await pipeline(client, sandbox, cfg).answer(task(tiny_db))

    assert prediction.answered_by == "likelihood" and prediction.sql == WRONG


async def test_when_no_sql_can_be_scored_the_vote_decides(tiny_db, sandbox, scripted):
    client = scripted(
        {
            "single_pass": first_wave(WRONG, [WRONG, RIGHT, OTHER, WRONG]),
            "likelihood": lambda text: ModelUnavailable("scoring server down"),
        }
    )
    cfg = scaling(select="likelihood", widen=())
    prediction = await pipeline(client, sandbox, cfg).answer(task(tiny_db))

    assert prediction.sql == WRONG and prediction.answered_by == "first_wave"
    assert "likelihood_failed" in prediction.degradation_reasons
    assert [s.step for s in prediction.steps] == ["first_wave", "likelihood"]


async def test_scores_from_one_bucket_alone_leave_the_choice_to_the_vote(
    tiny_db, sandbox, scripted
):
    wrong_too = "SELECT count(name) FROM singer"  # WRONG's result, written another way

    def likelihood(text):
        return ModelUnavailable("down") if text == RIGHT else -0.1

    client = scripted(
        {
            "single_pass": first_wave(WRONG, [wrong_too, RIGHT, RIGHT, WRONG]),
            "likelihood": likelihood,
        }
    )
    cfg = scaling(select="likelihood", widen=())
    prediction = await pipeline(client, sandbox, cfg).answer(task(tiny_db))

    assert client.calls["likelihood"] == 3
    assert prediction.answered_by == "first_wave" and prediction.sql == WRONG  # 3 votes to 2


async def test_select_first_wave_scores_under_the_first_waves_prompt(tiny_db, sandbox, scripted):
    client = scripted(
        {
            "single_pass": first_wave(WRONG, [WRONG, RIGHT, OTHER, WRONG]),
            "likelihood": likelihood_of(OTHER),
        }
    )
    cfg = scaling(select="likelihood", select_prompt="first_wave", select_max_sqls=2, widen=())
    prediction = await pipeline(client, sandbox, cfg).answer(task(tiny_db))

    greedy = client.requests[0][1]
    scoring = [r for a, r in client.requests if a == "likelihood"]
    assert len(scoring) == 2 and all(r.messages == greedy.messages for r in scoring)
    # the cap keeps the two largest buckets' SQLs: OTHER (1 vote) is never scored
    assert prediction.sql == WRONG


async def test_a_failed_model_is_a_prediction_error_not_an_exception(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": lambda r: ModelUnavailable("server down")})
    prediction = await pipeline(client, sandbox, scaling()).answer(task(tiny_db))

    assert prediction.error and prediction.sql == ""
    assert "generator_failed" in prediction.degradation_reasons


async def test_a_global_timeout_answers_from_the_candidates_so_far(tiny_db, sandbox, scripted):
    class Slow:
        requests: list = []

        async def chat(self, request, *, role="generator", budget=None):
            if request.temperature == 0.0:
                return await scripted({"single_pass": lambda r: sql(RIGHT)}).chat(
                    request, role=role, budget=budget
                )
            await asyncio.sleep(10)

    cfg = AdaptiveScaling(global_timeout_s=0.5)
    prediction = await pipeline(Slow(), sandbox, cfg).answer(task(tiny_db))

    assert prediction.degraded and "global_timeout" in prediction.degradation_reasons
    assert prediction.sql == RIGHT and prediction.answered_by == "first_wave"


async def test_an_index_never_built_is_noted_and_the_question_answered(tiny_db, sandbox, scripted):
    class Missing:
        def search_many(self, *a, **k):
            raise IndexNotBuilt("concerts", "/indexes")

    client = scripted({"single_pass": first_wave(RIGHT, [RIGHT])})
    p = pipeline(client, sandbox, scaling(), cell_retriever=Missing())
    prediction, trace = await p.answer_with_trace(task(tiny_db))

    assert prediction.retrieval == () and not prediction.degraded, prediction.degradation_reasons
    assert "cell_retriever_unavailable" in {d.label for d in trace.decisions}


async def test_build_pipeline_picks_the_adaptive_pipeline_from_config(tiny_db, sandbox, scripted):
    from core.config import load_config
    from pipelines.strategies.registry import scaling_settings

    cfg = load_config(["scaling=adaptive", "pipeline.trace.directory=null"])
    limits = {"global_timeout_s": 300, "token_budget": 60000}
    # scaling=adaptive changes none of its own fields
    assert scaling_settings(cfg) == AdaptiveScaling(**limits)
    built, _ = await build_pipeline(cfg, client=scripted({}), sandbox=sandbox).strategy_for(tiny_db)
    assert isinstance(built, AdaptivePipeline)
    # tiny_db: a small schema without solved examples of its own
    assert built.scaling == AdaptiveScaling(
        select="likelihood", widen_min_votes=0, escalate_within_s=None, **limits
    )


def test_the_first_wave_needs_a_candidate():
    with pytest.raises(ValueError, match="no candidates"):
        AdaptiveScaling(greedy=False, samples=0)


async def test_an_empty_answer_most_candidates_agree_on_is_kept(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": first_wave(EMPTY, [EMPTY, EMPTY, EMPTY, WRONG])})
    adaptive = pipeline(client, sandbox, scaling(widen=(), revise=False, tournament=False))
    prediction = await adaptive.answer(task(tiny_db))

    assert prediction.sql == EMPTY and prediction.exec_result.rows == ()


async def test_on_a_tie_an_answer_with_rows_beats_an_empty_one(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": first_wave(EMPTY, [EMPTY, WRONG, WRONG, OTHER])})
    adaptive = pipeline(client, sandbox, scaling(widen=(), revise=False, tournament=False))
    prediction = await adaptive.answer(task(tiny_db))

    assert prediction.exec_result.rows == ((5,),)


async def test_an_empty_result_whose_literal_misses_is_grounded_in_the_stored_value(
    tiny_db, sandbox, scripted
):
    lowercase = (
        "SELECT count(*) FROM singer WHERE country = 'france'"  # 0 rows: SQLite's = is exact
    )
    wrong_column = "SELECT count(*) FROM singer WHERE name = 'France'"  # country holds 'France'
    client = scripted(
        {"single_pass": first_wave(lowercase, [lowercase, wrong_column, EMPTY, WRONG])}
    )
    adaptive = pipeline(client, sandbox, scaling(widen=(), tournament=False))
    prediction = await adaptive.answer(task(tiny_db))

    assert prediction.exec_result.rows == ((2,),) and "'France'" in prediction.sql
    grounded = [c for c in prediction.candidates if "values" in c.lineage]
    assert len(grounded) == 3  # the greedy, its duplicate (one probe), the wrong column
    assert sorted(c.producer for c in grounded) == [  # each rewrite keeps its own producer
        "first_wave/T=0.8",
        "first_wave/T=0.8",
        "first_wave/greedy",
    ]
    assert EMPTY in [c.sql for c in prediction.candidates]  # 'Peru' is stored nowhere: it stands
    assert client.calls == {"single_pass": 2}  # no model call


async def test_a_filter_that_excludes_a_name_on_a_key_excludes_its_row(tiny_db, sandbox, scripted):
    # concert.singer_id != 'Joe' holds for every row (4); Joe is singer 1: two concerts remain
    vacuous = "SELECT count(*) FROM concert WHERE singer_id != 'Joe'"
    kept = "SELECT count(*) FROM singer WHERE country != 'France'"  # country holds it: it stands
    client = scripted({"single_pass": first_wave(vacuous, [vacuous, vacuous, kept, kept])})
    adaptive = pipeline(client, sandbox, scaling(widen=(), tournament=False))
    prediction = await adaptive.answer(task(tiny_db))

    assert prediction.exec_result.rows == ((2,),) and "singer_id <> 1" in prediction.sql
    grounded = [c for c in prediction.candidates if "values" in c.lineage]
    assert len(grounded) == 3 and all(c.exec_result.rows == ((2,),) for c in grounded)
    assert [c.exec_result.rows for c in prediction.candidates if c.sql == kept] == [((3,),)] * 2
    assert client.calls == {"single_pass": 2}


async def test_with_values_not_listed_the_empty_answers_stand(tiny_db, sandbox, scripted):
    lowercase = "SELECT count(*) FROM singer WHERE country = 'france'"
    client = scripted({"single_pass": first_wave(lowercase, [lowercase, lowercase, WRONG, WRONG])})
    adaptive = pipeline(
        client, sandbox, scaling(widen=(), tournament=False, repairs=("joins", "columns", "quotes"))
    )
    prediction = await adaptive.answer(task(tiny_db))

    assert not [c for c in prediction.candidates if "values" in c.lineage]
    assert prediction.exec_result.rows == ((0,),)


async def test_a_join_that_does_not_join_gets_the_schema_key_before_it_runs(
    tiny_db, sandbox, scripted
):
    # concert JOIN singer ON a condition on concert alone: every singer per 2015 concert
    cross = (
        "SELECT count(*) FROM concert AS T1 JOIN singer AS T2 ON T1.year = T1.year "
        "WHERE T1.year = 2015 AND T2.country = 'France'"
    )
    joined = "SELECT count(*) FROM concert WHERE year = 2015 AND singer_id IN (1, 2)"  # 1
    client = scripted({"single_pass": first_wave(cross, [cross, cross, joined, WRONG])})
    prediction = await pipeline(client, sandbox, scaling()).answer(task(tiny_db))

    rejoined = [c for c in prediction.candidates if "rejoin" in c.lineage]
    assert len(rejoined) == 3 and all("T1.singer_id = T2.singer_id" in c.sql for c in rejoined)
    assert prediction.exec_result.rows == ((1,),) and prediction.answered_by == "first_wave"

    client = scripted({"single_pass": first_wave(cross, [cross, cross, joined, WRONG])})
    without = await pipeline(
        client, sandbox, scaling(repairs=("columns", "quotes", "values"))
    ).answer(task(tiny_db))
    assert without.exec_result.rows == ((4,),)  # 2 concerts in 2015 × 2 French singers


async def test_a_field_read_off_a_list_of_structs_is_read_off_its_items_before_it_runs(
    work_duckdb, scripted
):
    from pipelines.sandbox import Sandbox

    off_the_list = "SELECT count(*) FROM tickets AS t WHERE t.links.type = 'blocks'"
    ask = Task(task_id="t1", question="How many tickets block another item?", db=work_duckdb)
    with Sandbox(timeout_s=10, row_cap=100) as box:
        client = scripted({"single_pass": first_wave(off_the_list, [off_the_list] * 4)})
        prediction = await pipeline(client, box, scaling()).answer(ask)
        client = scripted({"single_pass": first_wave(off_the_list, [off_the_list] * 4)})
        without = await pipeline(
            client, box, scaling(repairs=("joins", "columns", "quotes", "values"), fix_max=0)
        ).answer(ask)

    assert prediction.exec_result.rows == ((1,),) and prediction.answered_by == "first_wave"
    assert all("list_field_reads" in c.lineage for c in prediction.candidates)
    assert "not a struct" in (without.exec_result.error or "")


async def test_a_large_schema_reaches_the_generators_focused_on_the_question(
    tiny_db, sandbox, scripted
):
    from pipelines.schema.focus import SchemaFocuser
    from pipelines.settings import FocusSettings

    client = scripted({"single_pass": first_wave(RIGHT, [RIGHT] * 4)})
    focuser = SchemaFocuser(FocusSettings(above_tokens=20, similarity=False), embed=None)
    p = pipeline(client, sandbox, scaling(), focuser=focuser)
    prediction, trace = await p.answer_with_trace(task(tiny_db))

    assert prediction.exec_result.rows == ((2,),)
    system = [r.messages[0].content for _, r in client.requests]
    assert all("CREATE TABLE singer" in s and "CREATE TABLE concert" not in s for s in system)
    (focused,) = [d for d in trace.decisions if d.label == "schema.focused"]
    assert focused.features["tables"] == "singer"


async def test_own_examples_come_first_and_far_examples_of_other_databases_are_dropped(
    tiny_db, sandbox, scripted
):
    from pipelines.indexing.examples.own_examples import OwnExampleRetriever, SolvedExample
    from pipelines.settings import PipelineSettings, UnderstandingSettings

    class OtherDatabases:
        def search(self, skeleton, k=15, exclude_db=None, threshold=None):
            hits = [
                ExampleHit(question="near", skeleton="", sql="SELECT 1", db_id="x", score=0.97),
                ExampleHit(question="far", skeleton="", sql="SELECT 2", db_id="x", score=0.7),
            ]
            return [h for h in hits if threshold is None or 2 - 2 * h.score <= threshold][:k]

    own = OwnExampleRetriever(
        extra=lambda db: [SolvedExample(question="How many singers?", sql="SELECT 3")],
        embed=lambda texts: [[1.0] for _ in texts],
    )
    client = scripted({"single_pass": first_wave(RIGHT, [RIGHT] * 4)})
    # room for both other-database examples: only the threshold (cosine >= 0.95) drops "far"
    settings = PipelineSettings(
        understanding=UnderstandingSettings(examples_in_prompt=3, example_threshold=0.1)
    )
    p = pipeline(
        client,
        sandbox,
        scaling(),
        settings=settings,
        example_retriever=OtherDatabases(),
        own_examples=own,
    )
    await p.answer(task(tiny_db))
    prompt = client.requests[0][1].messages[-1].content
    assert prompt.index("Solved examples on this database:\nQuestion: How many singers?") < (
        prompt.index("Solved examples from other databases:\nQuestion: near")
    )
    assert "far" not in prompt


async def test_the_greedy_profile_is_the_first_call_alone_byte_for_byte(tiny_db, sandbox, scripted):
    """``scaling=greedy`` (conf/scaling/greedy.yaml) answers with the adaptive pipeline's greedy
    request and nothing after it, so a response cache shared with an adaptive run serves that call."""
    from core.config import load_config

    misspelt = "SELECT count(*) FROM singer WHERE Country_ = 'France'"  # repairable, not repaired
    runs = {}
    for profile in ("greedy", "adaptive"):
        cfg = load_config([f"scaling={profile}", "pipeline.trace.directory=null"])
        client = scripted({"single_pass": first_wave(misspelt, [RIGHT, RIGHT, RIGHT, RIGHT])})
        prediction = await build_pipeline(cfg, client=client, sandbox=sandbox).answer(task(tiny_db))
        runs[profile] = prediction, [r for _, r in client.requests]

    (greedy, greedy_requests), (adaptive, adaptive_requests) = runs["greedy"], runs["adaptive"]
    assert len(greedy_requests) == 1 and greedy.usage.calls == 1
    assert greedy_requests[0].fingerprint("m") == adaptive_requests[0].fingerprint("m")
    assert greedy.sql == misspelt and not greedy.exec_result.ok  # no schema repair
    assert [c.producer for c in greedy.candidates] == ["first_wave/greedy"]
    assert adaptive.exec_result.rows == ((2,),) and len(adaptive_requests) == 2


async def test_a_prompt_over_the_context_gives_up_values_rows_and_a_table_once_for_every_call(
    work_duckdb, scripted
):
    from pipelines.sandbox import Sandbox
    from pipelines.schema.focus import SchemaFocuser
    from pipelines.settings import FocusSettings
    from tests.pipelines.conftest import over_context

    queued = "SELECT count(*) FROM tickets WHERE stage = 'queued'"
    cells = type(
        "Cells",
        (),
        {
            "search_many": lambda self, db_id, queries, k=5, mode="hybrid", threshold=None: [
                CellHit(table="tickets", column="stage", value="queued", score=0.9, source="bm25")
            ]
        },
    )()
    client = scripted(
        {
            "single_pass": over_context(
                first_wave(queued, [queued] * 4),
                too_long=lambda r: "CREATE TABLE users" in r.messages[0].content,
            )
        }
    )
    focuser = SchemaFocuser(
        FocusSettings(above_tokens=20, similarity=False, budget_ratio=1.0), embed=None
    )
    with Sandbox(timeout_s=10, row_cap=100) as box:
        p = pipeline(client, box, scaling(), cell_retriever=cells, focuser=focuser)
        prediction, trace = await p.answer_with_trace(
            Task(task_id="t1", question="Which user owns the most queued tickets?", db=work_duckdb)
        )
        reference = (await p._schema(work_duckdb)).reference

    assert prediction.exec_result.rows == ((1,),) and prediction.answered_by == "first_wave"
    reduced = [d for d in trace.decisions if d.label == "prompt.reduced"]
    assert [d.features["given_up"] for d in reduced] == [
        ["examples_and_cells"],
        ["sample_rows"],
        ["table:users"],
    ]
    assert "prompt.reduced" in prediction.degradation_reasons
    # the greedy call was refused three times; the samples started from where it ended
    refused = [e for e in trace.events if e.attributes.get("error.type") == "ContextTooLong"]
    assert [e.name for e in refused] == ["first_wave/greedy"] * 3
    assert len(client.requests) == 5 and prediction.usage.calls == 2
    (tickets,) = [b for b in reference.tables if b.name == "tickets"]
    greedy, samples = (r for _, r in client.requests[-2:])
    for request in (greedy, samples):
        system, user = request.messages[0].content, request.messages[-1].content
        assert tickets.text in system and "CREATE TABLE users" not in system  # notes whole
        assert "Database values" not in user and "example rows" not in system
