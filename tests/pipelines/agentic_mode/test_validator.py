"""The semantic validator: the free count-shape rule (both ways), when the model is called, the
request it sends, the verdicts it reads (lenient: a rejection says why), and their findings."""

from __future__ import annotations

import json

import pytest

from pipelines.agentic_mode import TaxonomyError, load_taxonomy
from pipelines.agentic_mode.validator import (
    VALIDATION_SCHEMA,
    SemanticValidator,
    SemanticVerdict,
    ValidationInput,
    count_shape_finding,
)
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.runtime import AgentRuntime
from pipelines.contracts import ExecutionResult
from pipelines.settings import AgentSettings
from pipelines.trace import TraceRecorder
from tests.pipelines.agentic_mode.conftest import client_replying

SQL = "SELECT stage, COUNT(*) AS n FROM tickets GROUP BY stage"


def result(columns: tuple[str, ...], rows: list[tuple], **changes) -> ExecutionResult:
    return ExecutionResult(
        rows=tuple(rows), columns=columns, row_count=len(rows), hash="h", **changes
    )


TITLES = result(
    ("ticket_id_text", "title"), [("T-1", "Login fails"), ("T-2", "Slow"), ("T-3", "Typo")]
)
GROUPED = result(("stage", "n"), [("queued", 1), ("resolved", 2), ("work_in_progress", 1)])
ONE_COUNT = result(("count_star()",), [(3,)])
ERROR = ExecutionResult(error="no such table: x", error_kind="sql_error", hash="ERR:1")
EMPTY = result(("n",), [])


def validation_input(question: str = "How many tickets are there per stage?", **changes):
    values = {"question": question, "evidence": "", "sql": SQL, "result": GROUPED}
    return ValidationInput(**(values | changes))


def runtime(client) -> AgentRuntime:
    return AgentRuntime(client=client, executor=None, recorder=TraceRecorder("t", "q", "d"))


def validator() -> SemanticValidator:
    return SemanticValidator(settings=AgentSettings().validator)


def reply(reason: str, plausible: bool) -> str:
    return json.dumps({"reason": reason, "plausible": plausible})


# --- the count-shape rule -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "How many tickets are open?",
        "What is the number of open tickets?",
        "Total number of open tickets",
        "Count the open tickets.",
        "For how many tickets is the SLA paused?",
    ],
)
def test_a_count_answered_by_rows_without_a_number_is_rejected_without_a_model(question):
    finding = count_shape_finding(question, TITLES, load_taxonomy())
    assert finding.error_class == "too_many_rows_for_count" and finding.source == "result_shape"
    assert finding.detail == (
        "the question asks how many, and the query returned 3 rows (ticket_id_text, title) "
        "with no number in them"
    )


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # a grouped count: every row has its number
        ("How many tickets are there per stage?", GROUPED),
        ("For each stage, count the tickets", GROUPED),
        # numbers as text (DECIMAL) and NULL where a group has none still are numbers
        ("How many hours per stage?", result(("stage", "h"), [("a", "1.50"), ("b", None)])),
        # one figure
        ("How many tickets are open?", ONE_COUNT),
        (
            "How many tickets are open?",
            result(("title",), [("Login fails",)]),
        ),  # one row: the model's
        # items asked for, though "number of" or "count" is said
        ("Which tickets have a number of links above 2?", TITLES),
        ("List the tickets and how many links each has", TITLES),
        ("Show the tickets whose reopen count is above 2", TITLES),
        ("Tickets with a reopen count above 2", TITLES),  # "count" as a column's name
        ("What is the phone number of Ada?", result(("phone",), [("555-1234",), ("555-9",)])),
        ("Give me the count of open tickets", TITLES),  # a list verb first: the rule stays out
        # not the rule's: an error, no rows
        ("How many tickets are open?", ERROR),
        ("How many tickets are open?", EMPTY),
        # raw rows with an integer column: the rule cannot tell them from counts; the model judges
        ("How many tickets are open?", result(("ticket_id", "title"), [(1, "a"), (2, "b")])),
    ],
)
def test_the_count_rule_passes_what_may_be_right(question, answer):
    assert count_shape_finding(question, answer, load_taxonomy()) is None


def test_a_boolean_column_is_no_number():
    flags = result(("title", "open"), [("a", True), ("b", False)])
    assert count_shape_finding("How many tickets are open?", flags, load_taxonomy()) is not None


# --- the agent ----------------------------------------------------------------------------------


async def test_the_request_goes_to_the_validator_role_with_the_result_preview(scripted):
    client = scripted({"semantic_validator": lambda r: reply("", True)})
    rt = runtime(client)
    inp = validation_input(evidence="stage is the workflow stage")
    assert await validator().run(inp, rt) == SemanticVerdict(plausible=True)
    ((agent, request),) = client.requests
    assert agent == "semantic_validator"
    assert request.json_schema == VALIDATION_SCHEMA and request.temperature == 0.0
    assert request.max_tokens == 128
    system, user = request.messages
    assert system.content.startswith("You validate")
    assert "How many tickets are there per stage?" in user.content and SQL in user.content
    assert "Evidence: stage is the workflow stage" in user.content
    assert "Result: 3 rows (stage, n): queued, 1; resolved, 2; work_in_progress, 1" in user.content
    assert "${" not in system.content + user.content
    (event,) = rt.recorder.events
    assert event.attributes["scale_analytics.role"] == "validator"
    assert event.attributes["gen_ai.agent.name"] == "agentic.semantic_validator"


def test_the_schema_bounds_the_reason_and_puts_it_before_the_verdict():
    assert list(VALIDATION_SCHEMA["properties"]) == ["reason", "plausible"]
    assert VALIDATION_SCHEMA["properties"]["reason"]["maxLength"] <= 200


async def test_the_shape_rule_rejects_before_any_call(scripted):
    client = scripted({})
    verdict = await validator().run(
        validation_input("How many tickets are open?", result=TITLES), runtime(client)
    )
    assert not verdict.plausible and verdict.source == "result_shape"
    assert client.requests == []
    finding = verdict.finding(load_taxonomy())
    assert finding == count_shape_finding("How many tickets are open?", TITLES, load_taxonomy())


@pytest.mark.parametrize("answer", [ERROR, EMPTY])
async def test_an_error_or_an_empty_result_is_not_judged(scripted, answer):
    client = scripted({})
    verdict = await validator().run(validation_input(result=answer), runtime(client))
    assert verdict == SemanticVerdict(plausible=True) and client.requests == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            reply("A list of  tickets is asked, but the query returns a count.", False),
            SemanticVerdict(
                plausible=False,
                reason="A list of tickets is asked, but the query returns a count.",
            ),
        ),
        (reply("The counts fit.", True), SemanticVerdict(plausible=True)),
        (reply(" ", False), SemanticVerdict(plausible=True)),  # a rejection says why
    ],
)
async def test_replies_become_verdicts(scripted, text, expected):
    client = scripted({"semantic_validator": lambda r: text})
    assert await validator().run(validation_input(), runtime(client)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "plausible",
        '{"reason": ""}',
        '{"reason": "", "plausible": "yes"}',
        reply("x" * 400, False),
    ],
)
async def test_a_reply_that_is_no_verdict_raises(scripted, text):
    client = scripted({"semantic_validator": lambda r: text})
    with pytest.raises(AgentOutputError, match="semantic validator reply is not a verdict"):
        await validator().run(validation_input(), runtime(client))


async def test_through_the_model_client_a_reply_off_the_schema_is_an_agent_output_error():
    rt = runtime(client_replying('{"plausible": false}', "validator"))
    with pytest.raises(AgentOutputError, match="semantic validator reply is not a verdict"):
        await validator().run(validation_input(), rt)
    rt = runtime(client_replying(reply("", True), "validator"))
    assert await validator().run(validation_input(), rt) == SemanticVerdict(plausible=True)


def test_findings_of_the_model_and_of_the_shape_rule():
    taxonomy = load_taxonomy()
    assert SemanticVerdict(plausible=True).finding(taxonomy) is None
    model = SemanticVerdict(plausible=False, reason="A count is asked, but names come back.")
    finding = model.finding(taxonomy)
    assert (finding.error_class, finding.source) == ("implausible_result", "semantic_validator")
    assert finding.action == "repair_in_place" and finding.phase == "semantic"
    assert finding.detail == "A count is asked, but names come back"
    shape = SemanticVerdict(plausible=False, reason="3 rows", source="result_shape")
    assert shape.finding(taxonomy).error_class == "too_many_rows_for_count"


def test_a_taxonomy_without_the_validators_classes_is_refused(tmp_path):
    bare = tmp_path / "taxonomy.yaml"
    bare.write_text(
        "fallback: other\nclasses:\n  - {name: other, phase: runtime, action: stop,"
        " description: d, directive: d}\n",
        encoding="utf-8",
    )
    with pytest.raises(TaxonomyError, match="implausible_result"):
        SemanticValidator(settings=AgentSettings().validator, taxonomy=load_taxonomy(bare))
