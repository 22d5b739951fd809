"""SinglePassPipeline: one greedy call, SQL extracted and executed, failures → Prediction.error."""

from __future__ import annotations

import asyncio
import re

from models.errors import ModelUnavailable
from pipelines.contracts import Task
from pipelines.strategies.single_pass import SinglePassPipeline, SinglePassScaling
from pipelines.trace import JsonlTraceSink, read_traces


def _task(db, question="How many singers are from France?", evidence=""):
    return Task(task_id="t1", question=question, db=db, evidence=evidence)


async def test_one_greedy_call_executed(tiny_db, sandbox, scripted, tmp_path):
    client = scripted(
        {
            "single_pass": lambda r: (
                "```sql\nSELECT count(*) FROM singer WHERE country='France';\n```"
            )
        }
    )
    sink = JsonlTraceSink(tmp_path / "traces")
    pipeline = SinglePassPipeline(client=client, sandbox=sandbox, sinks=(sink,))

    prediction = await pipeline.answer(_task(tiny_db, evidence="France is a country"))

    assert prediction.sql == "SELECT count(*) FROM singer WHERE country='France'"
    assert prediction.exec_result.rows == ((2,),)
    assert len(prediction.candidates) == 1 and prediction.error is None
    assert prediction.usage.calls == 1
    ((agent, request),) = client.requests
    assert request.temperature == 0.0 and request.n == 1
    system, user = (m.content for m in request.messages)
    # the reference prompt: CREATE TABLE statements and 3 example rows per table in the shared
    # schema system message; evidence and question in the user message
    assert "CREATE TABLE singer" in system and "CREATE TABLE concert" in system
    assert "3 example rows" in system and "Joe" in system and not re.search(r"\bEve\b", system)
    assert (
        "France is a country" in user and "How many singers" in user and "CREATE TABLE" not in user
    )
    assert request.stop == ("\n```\n",)  # generation ends at the SQL's closing fence
    (trace,) = read_traces(sink.traces_path)
    assert trace.task_id == "t1" and prediction.trace_path.endswith("#t1")
    assert {e.surface for e in trace.events} == {"cognitive", "operational"}


async def test_model_failure_is_a_prediction_error_not_an_exception(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": lambda r: ModelUnavailable("server down")})
    prediction = await SinglePassPipeline(client=client, sandbox=sandbox).answer(_task(tiny_db))
    assert prediction.sql == "" and prediction.candidates == ()
    assert "server down" in prediction.error


async def test_reply_without_sql_is_an_error(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": lambda r: "I cannot answer that."})
    prediction = await SinglePassPipeline(client=client, sandbox=sandbox).answer(_task(tiny_db))
    assert prediction.error and "no SQL" in prediction.error


async def test_failing_sql_is_kept_as_the_answer(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": lambda r: "SELECT nope FROM singer"})
    prediction = await SinglePassPipeline(client=client, sandbox=sandbox).answer(_task(tiny_db))
    assert prediction.error is None
    assert prediction.exec_result.error and prediction.exec_result.hash.startswith("ERR:")


async def test_schema_is_read_once_per_database(tiny_db, sandbox, scripted):
    client = scripted({"single_pass": lambda r: "SELECT 1"})
    pipeline = SinglePassPipeline(client=client, sandbox=sandbox)
    await pipeline.answer(_task(tiny_db))
    reads = len(sandbox.executed)
    await pipeline.answer(_task(tiny_db, question="Another?"))
    assert len(sandbox.executed) == reads + 1  # only the candidate's own execution


async def test_timeout_returns_error_prediction(tiny_db, sandbox, scripted):
    import asyncio

    class Slow:
        async def chat(self, request, *, role="generator", budget=None):
            await asyncio.sleep(5)

    pipeline = SinglePassPipeline(
        client=Slow(),
        sandbox=sandbox,
        scaling=SinglePassScaling(global_timeout_s=0.2),
    )
    prediction = await pipeline.answer(_task(tiny_db))
    assert prediction.error and "timeout" in prediction.error
    assert prediction.degraded and prediction.degradation_reasons == ("global_timeout",)


async def test_self_consistency_votes_over_samples(tiny_db, sandbox, scripted):
    replies = [
        "SELECT count(*) FROM singer",
        "SELECT count(*) FROM singer WHERE country='France'",
        "SELECT count(*) FROM singer WHERE 'France' = country",
        "nothing here",
        "SELECT nope FROM x",
    ]
    client = scripted({"single_pass": lambda r: replies[: r.n]})
    scaling = SinglePassScaling(samples=5, temperature=0.8)
    prediction = await SinglePassPipeline(client=client, sandbox=sandbox, scaling=scaling).answer(
        _task(tiny_db)
    )
    ((_, request),) = client.requests
    assert request.n == 5 and request.temperature == 0.8 and request.seed is None
    assert len(prediction.candidates) == 4  # the reply without SQL is dropped
    assert prediction.exec_result.rows == ((2,),)  # 2 of 4 agree on 2; errors never win
    assert prediction.usage.calls == 1


async def test_a_cancelled_task_does_not_cancel_the_schema_read_others_wait_for(
    tiny_db, sandbox, scripted
):
    class SlowSandbox:
        async def execute(self, sql, db):
            await asyncio.sleep(0.05)
            return await sandbox.execute(sql, db)

    p = SinglePassPipeline(client=scripted({}), sandbox=SlowSandbox())
    first = asyncio.ensure_future(p.reference(tiny_db))
    second = asyncio.ensure_future(p.reference(tiny_db))
    await asyncio.sleep(0.01)
    first.cancel()  # e.g. its question hit the global timeout

    assert "CREATE TABLE singer" in (await second).text()
    assert first.cancelled()


QUEUED = "SELECT count(*) FROM tickets WHERE stage = 'queued'"


def two_table_focus():
    """A focus that ranks the documented work-item tables (tickets first) and shows both."""
    from pipelines.schema.focus import SchemaFocuser
    from pipelines.settings import FocusSettings

    return SchemaFocuser(
        FocusSettings(above_tokens=20, similarity=False, budget_ratio=1.0), embed=None
    )


def shows_users(request) -> bool:
    return "CREATE TABLE users" in request.messages[0].content


async def test_a_prompt_over_the_context_is_answered_with_a_smaller_one_notes_whole(
    work_duckdb, scripted
):
    from pipelines.sandbox import Sandbox
    from tests.pipelines.conftest import over_context

    client = scripted(
        {"single_pass": over_context(lambda r: f"```sql\n{QUEUED}\n```", too_long=shows_users)}
    )
    with Sandbox(timeout_s=10, row_cap=100) as box:
        pipeline = SinglePassPipeline(client=client, sandbox=box, focuser=two_table_focus())
        prediction, trace = await pipeline.answer_with_trace(
            Task(task_id="t1", question="Which user owns the most queued tickets?", db=work_duckdb)
        )
        reference = await pipeline.reference(work_duckdb)

    assert prediction.error is None and prediction.exec_result.rows == ((1,),)
    (focused,) = [d for d in trace.decisions if d.label == "schema.focused"]
    assert set(focused.features["tables"].split(",")) == {"tickets", "users"}
    # refused twice: the example rows went first, then the lower-ranked table
    reduced = [d for d in trace.decisions if d.label == "prompt.reduced"]
    assert [d.features["given_up"] for d in reduced] == [["sample_rows"], ["table:users"]]
    assert prediction.degraded and "prompt.reduced" in prediction.degradation_reasons
    assert prediction.usage.calls == 1  # the refusals spent nothing
    system = client.requests[-1][1].messages[0].content
    (tickets,) = [b for b in reference.tables if b.name == "tickets"]
    assert tickets.text in system and "example rows" not in system  # DDL and every note whole
    assert (
        "'queued' = open, waiting" in system and "'is_blocked_by' = the target blocks it" in system
    )


async def test_a_prompt_still_over_the_context_at_its_smallest_is_the_typed_error(
    work_duckdb, scripted
):
    from pipelines.sandbox import Sandbox
    from tests.pipelines.conftest import over_context

    client = scripted({"single_pass": over_context(lambda r: "SELECT 1", too_long=lambda r: True)})
    with Sandbox(timeout_s=10, row_cap=100) as box:
        pipeline = SinglePassPipeline(client=client, sandbox=box, focuser=two_table_focus())
        prediction = await pipeline.answer(
            Task(task_id="t1", question="Which user owns the most queued tickets?", db=work_duckdb)
        )

    assert prediction.sql == "" and prediction.candidates == ()
    assert prediction.error.startswith("PromptTooLong: the smallest prompt (1 table shown)")
    assert "prompt tokens + 512 for the reply exceed the model's context of" in prediction.error
    assert len(client.requests) == 3  # whole, without rows, without users
