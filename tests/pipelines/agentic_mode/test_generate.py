"""The agentic generator tool (pipelines/agentic_mode/generate.py)."""

from __future__ import annotations

import pytest

from models.errors import InvalidModelOutput
from pipelines.agentic_mode.generate import Attempt, GenerationRequest, generate_sql
from pipelines.agents.runtime import AgentRuntime
from pipelines.contracts import ExampleHit
from pipelines.trace import TraceRecorder

REQUEST = GenerationRequest(
    question="How many tickets are queued?",
    dialect="duckdb",
    db_id="work",
    schema_text="## tickets (3 rows)\n- stage text",
    examples=(
        ExampleHit(question="How many users?", skeleton="", sql="SELECT 1", db_id="work", score=1),
    ),
    rules="Rules learned on this database:\n- Use stage labels.",
    history=(Attempt(sql="SELECT count(*) FROM ticket", feedback=("[table_not_found] x.",)),),
    show_sql=True,
    temperature=0.3,
)


def runtime(client) -> AgentRuntime:
    return AgentRuntime(client=client, executor=None, recorder=TraceRecorder("t", "q", "work"))


async def test_the_request_carries_schema_examples_rules_history_and_question(scripted):
    client = scripted({"single_pass": lambda r: "```sql\nSELECT count(*) FROM tickets\n```"})
    generated = await generate_sql(REQUEST, runtime(client))

    assert generated.sql == "SELECT count(*) FROM tickets"
    ((_, request),) = client.requests
    system, user = request.messages[0].content, request.messages[-1].content
    assert "## tickets" in system and "Solved examples on this database" in system
    assert "UNNEST" in system and "DuckDB" in system
    assert "Use stage labels." in user and "SELECT count(*) FROM ticket" in user
    assert "[table_not_found]" in user and user.rstrip().endswith("```sql code block.")
    assert "How many tickets are queued?" in user
    assert (request.temperature, request.n, request.stop) == (0.3, 1, ("\n```\n",))


async def test_a_reply_without_sql_is_invalid_output(scripted):
    client = scripted({"single_pass": lambda r: ""})
    with pytest.raises(InvalidModelOutput):
        await generate_sql(REQUEST.model_copy(update={"history": ()}), runtime(client))


async def test_a_prompt_over_the_context_window_is_raised_for_the_caller_to_narrow(scripted):
    from models.errors import ContextTooLong

    client = scripted({"single_pass": lambda r: ContextTooLong("8206 > 8192 tokens")})
    with pytest.raises(ContextTooLong):  # pipelines/prompt_fit.py gives up what it can
        await generate_sql(REQUEST, runtime(client))
    assert len(client.requests) == 1
