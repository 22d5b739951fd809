"""The plan verifier: the request it sends, the verdicts it reads (lenient: only a named problem
objects), and the findings they map to."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from pipelines.agentic_mode import TaxonomyError, load_taxonomy
from pipelines.agentic_mode.verifier import (
    CHECK_CLASSES,
    PLAN_SCHEMA,
    PlanInput,
    PlanVerdict,
    PlanVerifier,
)
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.runtime import AgentRuntime
from pipelines.settings import AgentSettings
from pipelines.trace import TraceRecorder
from tests.pipelines.agentic_mode.conftest import client_replying

SCHEMA_TEXT = "CREATE TABLE tickets (ticket_id INTEGER PRIMARY KEY, links STRUCT(type VARCHAR)[])"
SQL = "SELECT COUNT(*) FROM tickets t, UNNEST(t.links) AS u(l) WHERE l.type = 'blocks'"


def plan_input(**changes) -> PlanInput:
    values = {
        "question": "How many tickets block another item?",
        "evidence": "blocking means a link of type 'blocks'",
        "dialect": "duckdb",
        "schema_text": SCHEMA_TEXT,
        "sql": SQL,
    }
    return PlanInput(**(values | changes))


def runtime(client) -> AgentRuntime:
    return AgentRuntime(client=client, executor=None, recorder=TraceRecorder("t", "q", "d"))


def verifier() -> PlanVerifier:
    return PlanVerifier(settings=AgentSettings().verifier)


def reply(problem: str, check: str, ok: bool) -> str:
    return json.dumps({"problem": problem, "check": check, "ok": ok})


async def test_the_request_goes_to_the_verifier_role_constrained_by_the_schema(scripted):
    client = scripted({"plan_verifier": lambda r: reply("", "none", True)})
    verdict = await verifier().run(plan_input(), runtime(client))
    assert verdict == PlanVerdict(ok=True)
    ((agent, request),) = client.requests
    assert agent == "plan_verifier"
    assert request.json_schema == PLAN_SCHEMA and request.temperature == 0.0
    assert request.max_tokens == 160
    system, user = request.messages
    assert SCHEMA_TEXT in system.content  # the generators' shared system message: cache reuse
    assert SQL in user.content and "How many tickets block another item?" in user.content
    assert "Evidence: blocking means" in user.content and "DuckDB" in user.content
    assert "${" not in system.content + user.content


async def test_the_call_is_traced_under_the_verifier_role(scripted):
    client = scripted({"plan_verifier": lambda r: reply("", "none", True)})
    rt = runtime(client)
    await verifier().run(plan_input(), rt)
    (event,) = rt.recorder.events
    assert event.attributes["scale_analytics.role"] == "verifier"
    assert event.attributes["gen_ai.agent.name"] == "agentic.plan_verifier"


def test_the_schema_bounds_the_problem_and_puts_it_before_the_verdict():
    assert list(PLAN_SCHEMA["properties"]) == ["problem", "check", "ok"]
    assert PLAN_SCHEMA["properties"]["problem"]["maxLength"] <= 240
    assert PLAN_SCHEMA["properties"]["check"]["enum"] == [*CHECK_CLASSES, "none"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            reply("COUNT(*) counts  links, not tickets.", "grain", False),
            PlanVerdict(ok=False, check="grain", problem="COUNT(*) counts links, not tickets."),
        ),
        (
            reply("Join on city repeats rows.", "join_safety", False),
            PlanVerdict(ok=False, check="join_safety", problem="Join on city repeats rows."),
        ),
        # lenient: an objection needs a check and a problem; ok wins over a stray problem
        (reply("", "grain", False), PlanVerdict(ok=True)),
        (reply("Looks odd.", "none", False), PlanVerdict(ok=True)),
        (reply("Joins on keys.", "join_safety", True), PlanVerdict(ok=True)),
    ],
)
async def test_replies_become_verdicts(scripted, text, expected):
    client = scripted({"plan_verifier": lambda r: text})
    assert await verifier().run(plan_input(), runtime(client)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The query is fine.",
        '{"problem": "", "check": "joins", "ok": true}',
        '{"problem": "", "check": "none"}',
        '{"problem": "", "check": "none", "ok": "yes"}',
        json.dumps({"problem": "x" * 500, "check": "grain", "ok": False}),
    ],
)
async def test_a_reply_that_is_no_verdict_raises(scripted, text):
    client = scripted({"plan_verifier": lambda r: text})
    with pytest.raises(AgentOutputError, match="plan verifier reply"):
        await verifier().run(plan_input(), runtime(client))


async def test_through_the_model_client_a_verdict_passes():
    rt = runtime(client_replying(reply("", "none", True), "verifier"))
    assert await verifier().run(plan_input(), rt) == PlanVerdict(ok=True)


@pytest.mark.parametrize("text", ["ok", reply("", "joins", False)])
async def test_through_the_model_client_a_reply_off_the_schema_is_an_agent_output_error(text):
    # the client's JSON-schema check raises before the parse: one error type all the same
    rt = runtime(client_replying(text, "verifier"))
    with pytest.raises(AgentOutputError, match="plan verifier reply is not a verdict"):
        await verifier().run(plan_input(), rt)


@pytest.mark.parametrize(
    ("check", "error_class"),
    [
        ("join_safety", "unsafe_join"),
        ("grain", "wrong_grain"),
        ("deduplication", "misplaced_deduplication"),
    ],
)
def test_each_check_maps_to_its_taxonomy_class(check, error_class):
    verdict = PlanVerdict(ok=False, check=check, problem="Use COUNT(DISTINCT t.ticket_id).")
    finding = verdict.finding(load_taxonomy())
    assert finding.error_class == error_class and finding.phase == "semantic"
    assert finding.action == "repair_in_place" and finding.source == "plan_verifier"
    assert finding.detail == "Use COUNT(DISTINCT t.ticket_id)"
    assert finding.feedback().startswith(f"[{error_class}] Use COUNT(DISTINCT t.ticket_id). ")


def test_an_ok_verdict_has_no_finding_and_an_objection_names_its_check():
    assert PlanVerdict(ok=True).finding(load_taxonomy()) is None
    with pytest.raises(ValidationError, match="names the check"):
        PlanVerdict(ok=False, problem="something")


def test_the_packaged_taxonomy_has_the_verifiers_classes_and_another_must_too(tmp_path):
    load_taxonomy().require(PlanVerifier.emits, "the plan verifier")
    bare = tmp_path / "taxonomy.yaml"
    bare.write_text(
        "fallback: other\nclasses:\n  - {name: other, phase: runtime, action: stop,"
        " description: d, directive: d}\n",
        encoding="utf-8",
    )
    verdict = PlanVerdict(ok=False, check="grain", problem="p")
    with pytest.raises(TaxonomyError, match="wrong_grain"):
        verdict.finding(load_taxonomy(bare))
