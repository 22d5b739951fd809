"""AgenticPipeline with a scripted model on a real documented DuckDB database (a list of typed
links, a nested struct, documented stages) behind the real sandbox: acceptance, the checker
chain's blocks and their directives, the plain-retry ablation, schema expansion, engine errors,
the fallback, the call allowance, entity selection and its fallback."""

from __future__ import annotations

import json

import pytest

from pipelines.agentic_mode.checks import DEFAULT_CHECKS
from pipelines.contracts import CellHit, Task
from pipelines.factory import build_pipeline
from pipelines.indexing.errors import IndexNotBuilt
from pipelines.sandbox import Sandbox
from pipelines.settings import FocusSettings, PipelineSettings
from pipelines.strategies.agentic import AgenticPipeline
from pipelines.strategies.agentic_settings import AgenticScaling

BLOCKED_COUNT = "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(link) WHERE link.type = 'is_blocked_by'"
NO_UNNEST = "SELECT count(*) FROM tickets AS t WHERE t.links.type = 'is_blocked_by'"
OFF_VOCABULARY = "SELECT count(*) FROM tickets WHERE stage = 'open'"
OPEN_COUNT = "SELECT count(*) FROM tickets WHERE stage IN ('queued', 'work_in_progress')"


def sql(text: str) -> str:
    return f"```sql\n{text}\n```"


def replies(*texts: str):
    """The generator's replies in order, the last one repeated."""
    queue = list(texts)

    def reply(request):
        return sql(queue.pop(0) if len(queue) > 1 else queue[0])

    return reply


def scaling(**agentic) -> AgenticScaling:
    agentic.setdefault("cheatsheet", False)
    return AgenticScaling(**agentic, global_timeout_s=60)


SETTINGS = PipelineSettings(focus=FocusSettings(similarity=False))


@pytest.fixture
def real_sandbox():
    with Sandbox(timeout_s=10, row_cap=100) as box:
        yield box


def task(db, question="How many tickets are blocked by another item?") -> Task:
    return Task(task_id="t1", question=question, db=db)


def pipeline(client, sandbox, scaling_cfg, **kw) -> AgenticPipeline:
    return AgenticPipeline(
        client=client, sandbox=sandbox, scaling=scaling_cfg, settings=SETTINGS, **kw
    )


def user_message(request) -> str:
    return request.messages[-1].content


async def test_a_clean_first_answer_is_accepted(work_duckdb, real_sandbox, scripted):
    client = scripted({"single_pass": replies(BLOCKED_COUNT)})
    prediction = await pipeline(client, real_sandbox, scaling()).answer(task(work_duckdb))

    assert prediction.exec_result.rows == ((1,),)
    assert prediction.answered_by == "attempt_1"
    assert [s.step for s in prediction.steps] == ["generate"]  # two entities: no selection
    ((_, request),) = client.requests
    system = request.messages[0].content
    assert "## tickets" in system and "## users" in system
    assert "links[].type" in system and "is_blocked_by" in system  # sub-fields and vocabularies
    assert system.index("## tickets") < system.index("## users")  # hubs first, then larger
    assert (request.temperature, request.n) == (0.0, 1)
    assert "earlier answers" not in user_message(request)


class QueuedCells:
    """A cell index that finds one value for any question."""

    def search_many(self, db_id, queries, k=5, mode="hybrid", threshold=None):
        return [CellHit(table="tickets", column="stage", value="queued", score=0.9, source="bm25")]


class NeverBuilt:
    def search_many(self, *args, **kwargs):
        raise IndexNotBuilt("work", "/indexes")


async def test_cell_values_matching_the_question_reach_the_generator(
    work_duckdb, real_sandbox, scripted
):
    client = scripted({"single_pass": replies(OPEN_COUNT)})
    prediction, trace = await pipeline(
        client, real_sandbox, scaling(), cell_retriever=QueuedCells()
    ).answer_with_trace(task(work_duckdb, "How many tickets are queued?"))

    (_, request), *_ = client.requests
    assert "Database values that match words of the question:" in user_message(request)
    assert "- tickets.stage = 'queued'" in user_message(request)
    assert prediction.retrieval == ("cells",)
    assert [h.value for h in trace.context.cell_hits] == ["queued"]


async def test_without_a_cell_index_the_question_is_answered_without_values(
    work_duckdb, real_sandbox, scripted
):
    client = scripted({"single_pass": replies(OPEN_COUNT)})
    prediction, trace = await pipeline(
        client, real_sandbox, scaling(), cell_retriever=NeverBuilt()
    ).answer_with_trace(task(work_duckdb, "How many tickets are open?"))

    assert prediction.exec_result.rows == ((2,),) and not prediction.degraded
    assert "Database values" not in user_message(client.requests[0][1])
    assert "cell_retriever_unavailable" in {d.label for d in trace.decisions}


async def test_a_blocked_sql_is_never_run_and_its_directive_goes_back(
    work_duckdb, real_sandbox, scripted
):
    client = scripted({"single_pass": replies(NO_UNNEST, BLOCKED_COUNT)})
    prediction = await pipeline(client, real_sandbox, scaling()).answer(task(work_duckdb))

    assert prediction.exec_result.rows == ((1,),)
    assert prediction.answered_by == "attempt_2"
    assert [c.sql for c in prediction.candidates] == [BLOCKED_COUNT]  # the blocked one never ran
    second = client.requests[1][1]
    assert NO_UNNEST not in user_message(second)  # what was wrong, not the SQL to copy
    assert "[unnest_missing]" in user_message(second)
    assert "UNNEST" in user_message(second).split("[unnest_missing]")[1]  # the directive
    assert second.temperature == AgenticScaling().repair_temperature
    trace = (
        await pipeline(
            scripted({"single_pass": replies(NO_UNNEST, BLOCKED_COUNT)}), real_sandbox, scaling()
        ).answer_with_trace(task(work_duckdb))
    )[1]
    repairs = [d for d in trace.decisions if d.label == "agentic.repair_in_place"]
    assert [(d.features["error_class"], d.features["source"]) for d in repairs] == [
        ("unnest_missing", "nested_paths")
    ]


async def test_a_rewritten_sql_runs_as_rewritten_and_the_rewrite_is_traced(
    work_duckdb, real_sandbox, scripted
):
    shouted = "SELECT COUNT(*) FROM TICKETS AS t, UNNEST(t.LINKS) AS u(link) WHERE link.type = 'is_blocked_by'"
    client = scripted({"single_pass": replies(shouted)})
    prediction, trace = await pipeline(client, real_sandbox, scaling()).answer_with_trace(
        task(work_duckdb)
    )

    assert prediction.exec_result.rows == ((1,),)
    assert prediction.answered_by == "attempt_1"
    assert "FROM tickets" in prediction.sql and "t.links" in prediction.sql
    rewrites = [d for d in trace.decisions if d.label == "agentic.rewrite"]
    assert [(d.stage, d.features["rewriter"]) for d in rewrites] == [
        ("attempt_1", "identifier_casing")
    ]


async def test_without_directives_the_generator_gets_only_what_was_found(
    work_duckdb, real_sandbox, scripted
):
    client = scripted({"single_pass": replies(OFF_VOCABULARY, OPEN_COUNT)})
    prediction = await pipeline(client, real_sandbox, scaling(directives=False)).answer(
        task(work_duckdb, "How many tickets are open?")
    )

    assert prediction.exec_result.rows == ((2,),)
    feedback = user_message(client.requests[1][1])
    assert "open" in feedback and "[enum_value_outside_vocabulary]" not in feedback


async def test_a_missing_table_brings_its_entity_into_the_schema(
    work_duckdb, real_sandbox, scripted
):
    wrong = (
        "SELECT t.title, u.display_name FROM tickets AS t JOIN user_accounts AS u"
        " ON u.user_id = t.owner_id WHERE t.stage = 'queued'"
    )
    right = (
        "SELECT t.title, u.display_name FROM tickets AS t JOIN users AS u"
        " ON u.user_id = t.owner_id WHERE t.stage = 'queued'"
    )
    client = scripted(
        {
            "select_entities": lambda r: json.dumps({"entities": ["tickets"]}),
            "single_pass": replies(wrong, right),
        }
    )
    prediction = await pipeline(client, real_sandbox, scaling(max_entities=1)).answer(
        task(work_duckdb, "Who owns each queued ticket?")
    )

    assert prediction.exec_result.rows == (("Login fails", "Ada"),)
    first, second = (r for a, r in client.requests if a == "single_pass")
    assert "## users" not in first.messages[0].content
    assert "## users" in second.messages[0].content
    assert "The schema now also shows users" in user_message(second)
    select = next(r for a, r in client.requests if a == "select_entities")
    assert select.json_schema["properties"]["entities"]["items"]["enum"] == ["users", "tickets"]


async def test_with_column_names_listed_a_column_one_key_away_is_joined_without_a_retry(
    work_duckdb, real_sandbox, scripted
):
    client = scripted(
        {
            "select_entities": lambda r: json.dumps({"entities": ["tickets"]}),
            "single_pass": replies(
                "SELECT t.title, t.display_name FROM tickets AS t WHERE t.stage = 'queued'"
            ),
        }
    )
    prediction, trace = await pipeline(
        client,
        real_sandbox,
        scaling(max_entities=1, checks=(*DEFAULT_CHECKS[:4], "column_names", *DEFAULT_CHECKS[4:])),
    ).answer_with_trace(task(work_duckdb, "Who owns each queued ticket?"))

    assert prediction.exec_result.rows == (("Login fails", "Ada"),)
    assert prediction.answered_by == "attempt_1"
    assert "users" in prediction.sql  # the column repair joined the table that has it
    assert [d.features["rewriter"] for d in trace.decisions if d.label == "agentic.rewrite"] == [
        "column_names"
    ]


async def test_an_engine_error_is_classified_and_repaired(work_duckdb, real_sandbox, scripted):
    broken = "SELECT CAST(title AS INTEGER) FROM tickets"
    client = scripted({"single_pass": replies(broken, "SELECT count(*) FROM tickets")})
    prediction = await pipeline(client, real_sandbox, scaling()).answer(
        task(work_duckdb, "How many tickets are there?")
    )

    assert prediction.exec_result.rows == ((3,),)
    assert "[conversion_error]" in user_message(client.requests[1][1])


async def test_when_every_attempt_is_blocked_the_last_one_runs_anyway(
    work_duckdb, real_sandbox, scripted
):
    client = scripted({"single_pass": replies(OFF_VOCABULARY)})
    prediction, trace = await pipeline(
        client, real_sandbox, scaling(max_attempts=2)
    ).answer_with_trace(task(work_duckdb, "How many tickets are open?"))

    assert len(client.requests) == 3  # the second attempt repeated the first: drawn again
    assert prediction.sql == OFF_VOCABULARY and prediction.exec_result.rows == ((0,),)
    assert "agentic.fallback_blocked" in [d.label for d in trace.decisions]


async def test_with_no_checks_the_engine_meets_the_mistake(work_duckdb, real_sandbox, scripted):
    client = scripted({"single_pass": replies(NO_UNNEST, BLOCKED_COUNT)})
    prediction = await pipeline(client, real_sandbox, scaling(checks=())).answer(task(work_duckdb))

    assert prediction.exec_result.rows == ((1,),)
    assert [c.exec_result.ok for c in prediction.candidates] == [False, True]


async def test_garbage_selection_falls_back_to_the_schema_focus(
    work_duckdb, real_sandbox, scripted
):
    client = scripted(
        {
            "select_entities": lambda r: "not json",
            "single_pass": replies(BLOCKED_COUNT),
        }
    )
    prediction, trace = await pipeline(
        client, real_sandbox, scaling(max_entities=1)
    ).answer_with_trace(task(work_duckdb))

    assert prediction.exec_result.rows == ((1,),)
    labels = [d.label for d in trace.decisions]
    assert "select_entities_unusable" in labels
    chosen = next(d for d in trace.decisions if d.label == "agentic.entities")
    assert "tickets" in chosen.features["entities"].split(",")


async def test_the_focus_reads_the_reference_schema_once_per_database(
    work_duckdb, real_sandbox, scripted, monkeypatch
):
    import pipelines.strategies.base as agentic_module

    reads = []
    real = agentic_module.reference_schema

    async def counted(*args, **kwargs):
        reads.append(args[1].db_id)
        return await real(*args, **kwargs)

    monkeypatch.setattr(agentic_module, "reference_schema", counted)
    client = scripted({"single_pass": replies(BLOCKED_COUNT)})
    agent = pipeline(client, real_sandbox, scaling(select_entities="focus", max_entities=1))
    for question in ("How many tickets are blocked?", "How many blocker tickets are there?"):
        prediction = await agent.answer(task(work_duckdb, question))
        assert prediction.exec_result.ok

    assert reads == ["work"]


@pytest.mark.parametrize(
    "agentic",
    [
        AgenticScaling(),
        AgenticScaling(max_attempts=5, verifier=True, validator=True),
        AgenticScaling(select_entities="focus", max_attempts=1),
    ],
)
async def test_no_path_makes_more_calls_than_the_allowance(
    agentic, work_duckdb, real_sandbox, scripted
):
    client = scripted(
        {
            "select_entities": lambda r: json.dumps({"entities": ["tickets"]}),
            "single_pass": replies(NO_UNNEST),
        }
    )
    cfg = agentic.model_copy(
        update={
            "cheatsheet": False,
            "verifier": False,
            "validator": False,
            "max_entities": 1,
            "global_timeout_s": 60,
        }
    )
    agentic_pipeline = pipeline(client, real_sandbox, cfg)
    await agentic_pipeline.answer(task(work_duckdb))

    assert 0 < len(client.requests) <= agentic_pipeline.call_allowance()


async def test_the_factory_builds_it_from_scaling_strategy_agentic(tiny_db, sandbox):
    from core.config import load_config

    cfg = load_config(["scaling=agentic", "model=replay"])
    built, _ = await build_pipeline(cfg, client=object(), sandbox=sandbox).strategy_for(tiny_db)
    assert isinstance(built, AgenticPipeline)
    assert built.scaling == AgenticScaling(global_timeout_s=300, token_budget=60000)


async def test_a_fixed_finding_becomes_a_rule_the_next_question_is_given(
    work_duckdb, real_sandbox, scripted, tmp_path
):
    from pipelines.agentic_mode.cheatsheet import Cheatsheet
    from pipelines.settings import CheatsheetSettings

    sheet = CheatsheetSettings(root=str(tmp_path / "sheets"))
    settings = SETTINGS.model_copy(update={"cheatsheet": sheet})
    client = scripted({"single_pass": replies(NO_UNNEST, BLOCKED_COUNT)})
    agentic = AgenticPipeline(
        client=client, sandbox=real_sandbox, scaling=scaling(cheatsheet=True), settings=settings
    )
    await agentic.answer(task(work_duckdb))

    (rule,) = Cheatsheet.open(sheet, work_duckdb).rules()
    assert (rule.error_class, rule.seen, rule.fixed) == ("unnest_missing", 1, 1)
    assert "Rules learned" not in user_message(client.requests[0][1])  # nothing learned yet

    later = scripted({"single_pass": replies(BLOCKED_COUNT)})
    await AgenticPipeline(
        client=later, sandbox=real_sandbox, scaling=scaling(cheatsheet=True), settings=settings
    ).answer(task(work_duckdb, "How many tickets block something?"))
    assert rule.text in user_message(later.requests[0][1])


async def test_a_frozen_cheatsheet_is_read_and_never_written(
    work_duckdb, real_sandbox, scripted, tmp_path
):
    from pipelines.agentic_mode.cheatsheet import Cheatsheet
    from pipelines.settings import CheatsheetSettings

    sheet = CheatsheetSettings(root=str(tmp_path / "sheets"), learn=False)
    settings = SETTINGS.model_copy(update={"cheatsheet": sheet})
    client = scripted({"single_pass": replies(NO_UNNEST, BLOCKED_COUNT)})
    await AgenticPipeline(
        client=client, sandbox=real_sandbox, scaling=scaling(cheatsheet=True), settings=settings
    ).answer(task(work_duckdb))

    assert Cheatsheet.open(sheet, work_duckdb).rules() == ()


EMPTY = "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(link) GROUP BY link.type HAVING 0"


async def test_an_empty_result_goes_back_once_and_stands_if_nothing_better_comes(
    work_duckdb, real_sandbox, scripted
):
    client = scripted({"single_pass": replies(EMPTY, BLOCKED_COUNT)})
    prediction = await pipeline(client, real_sandbox, scaling()).answer(task(work_duckdb))
    assert prediction.exec_result.rows == ((1,),) and prediction.answered_by == "attempt_2"
    assert "[empty_result]" in user_message(client.requests[1][1])

    client = scripted({"single_pass": replies(EMPTY)})
    prediction = await pipeline(client, real_sandbox, scaling()).answer(task(work_duckdb))
    # one retry (its repeat of the same SQL drawn again), then the empty answer is accepted
    assert len(client.requests) == 3
    assert prediction.sql == EMPTY and prediction.answered_by == "attempt_2"

    client = scripted({"single_pass": replies(EMPTY, BLOCKED_COUNT)})
    prediction = await pipeline(client, real_sandbox, scaling(retry_empty=False)).answer(
        task(work_duckdb)
    )
    assert len(client.requests) == 1 and prediction.exec_result.rows == ()


async def test_a_repair_that_repeats_an_earlier_sql_is_drawn_again(
    work_duckdb, real_sandbox, scripted
):
    client = scripted({"single_pass": replies(NO_UNNEST, NO_UNNEST, BLOCKED_COUNT)})
    prediction, trace = await pipeline(client, real_sandbox, scaling()).answer_with_trace(
        task(work_duckdb)
    )

    assert prediction.exec_result.rows == ((1,),) and prediction.answered_by == "attempt_2"
    redraw = client.requests[2][1]
    assert (redraw.temperature, redraw.seed) == (AgenticScaling().duplicate_temperature, 2)
    assert "agentic.duplicate" in [d.label for d in trace.decisions]
    user = user_message(redraw)
    assert user.index("-- Question:") < user.index("earlier answers")  # feedback comes last


async def test_an_answer_is_given_even_when_no_attempt_ran_cleanly(
    work_duckdb, real_sandbox, scripted
):
    unknown = "SELECT count(*) FROM tickets WHERE stagee = 'queued'"
    client = scripted({"single_pass": replies(unknown)})
    prediction, trace = await pipeline(
        client, real_sandbox, scaling(max_attempts=1)
    ).answer_with_trace(task(work_duckdb, "How many tickets are queued?"))

    assert prediction.sql == unknown and not prediction.exec_result.ok
    assert prediction.error is None
    assert "agentic.fallback_last" in [d.label for d in trace.decisions]


async def test_a_prompt_the_model_cannot_take_ends_the_attempts_and_the_earlier_ones_answer(
    work_duckdb, real_sandbox, scripted
):
    from models.errors import ContextTooLong

    calls = []

    def reply(request):
        calls.append(request)
        if len(calls) == 1:
            return sql(OFF_VOCABULARY)
        return ContextTooLong("request (8206 tokens) exceeds the available context size (8192)")

    client = scripted({"single_pass": reply})
    prediction, trace = await pipeline(client, real_sandbox, scaling()).answer_with_trace(
        task(work_duckdb, "How many tickets are open?")
    )

    assert len(calls) == 2  # no third attempt after the overflow
    assert prediction.sql == OFF_VOCABULARY and prediction.error is None
    assert "generate_failed" in [d.label for d in trace.decisions] and prediction.degraded


async def test_when_the_first_prompt_is_refused_the_answer_is_the_typed_error(
    work_duckdb, real_sandbox, scripted
):
    from models.errors import ContextTooLong

    client = scripted({"single_pass": lambda request: ContextTooLong("8206 > 8192 tokens")})
    prediction, trace = await pipeline(client, real_sandbox, scaling()).answer_with_trace(
        task(work_duckdb, "How many tickets are open?")
    )

    # nothing to give up (no examples or cell values): the typed error, said as such
    assert prediction.sql == "" and prediction.error.startswith("PromptTooLong")
    assert "smallest prompt does not fit" in prediction.error
    assert trace.decisions and len(client.requests) == 1


async def test_a_prompt_over_the_context_goes_again_without_cell_values_for_every_attempt(
    work_duckdb, real_sandbox, scripted
):
    from models.errors import ContextTooLong

    def reply(request):
        if "Database values" in user_message(request):
            return ContextTooLong("request (8206 tokens) exceeds the available context (8192)")
        return sql(OFF_VOCABULARY if len(client.requests) < 3 else OPEN_COUNT)

    client = scripted({"single_pass": reply})
    prediction, trace = await pipeline(
        client, real_sandbox, scaling(), cell_retriever=QueuedCells()
    ).answer_with_trace(task(work_duckdb, "How many tickets are queued?"))

    # refused once; the retry and the later attempt go without the values, schema and history kept
    refused, retry, later = (request for _, request in client.requests)
    assert "Database values" in user_message(refused)
    assert "Database values" not in user_message(retry) + user_message(later)
    assert "## tickets" in later.messages[0].content and "earlier answers" in user_message(later)
    (reduced,) = [d for d in trace.decisions if d.label == "prompt.reduced"]
    assert reduced.features["given_up"] == ["examples_and_cells"] and reduced.degradation
    assert prediction.sql == OPEN_COUNT and "prompt.reduced" in prediction.degradation_reasons


async def test_the_failed_sql_is_shown_only_when_asked(work_duckdb, real_sandbox, scripted):
    client = scripted({"single_pass": replies(NO_UNNEST, BLOCKED_COUNT)})
    await pipeline(client, real_sandbox, scaling(show_failed_sql=True)).answer(task(work_duckdb))
    assert NO_UNNEST in user_message(client.requests[1][1])


async def test_a_verifier_objection_goes_back_and_an_unusable_verdict_is_no_objection(
    work_duckdb, real_sandbox, scripted
):
    objection = json.dumps({"problem": "Count tickets, not links.", "check": "grain", "ok": False})
    verdicts = iter([objection, "not json"])
    client = scripted(
        {"single_pass": replies(BLOCKED_COUNT), "plan_verifier": lambda r: next(verdicts)}
    )
    prediction, trace = await pipeline(
        client, real_sandbox, scaling(verifier=True)
    ).answer_with_trace(task(work_duckdb))

    assert prediction.answered_by == "attempt_2"
    assert "[wrong_grain]" in user_message(client.requests[2][1])
    labels = [d.label for d in trace.decisions]
    assert "verify_unusable" in labels
    assert [s.step for s in prediction.steps] == ["generate", "verify"] * 2
