"""Reply parsing and the shared generator machinery (temperatures → requests, failures)."""

from __future__ import annotations

import pytest

from models.errors import BudgetExceeded, InvalidModelOutput, ModelTimeout
from pipelines.agents.base import GenerationInput, parse_sql_reply, parse_tagged_reply
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.icl import COT
from pipelines.agents.reasoning_generator import REASONING
from pipelines.agents.runtime import AgentRuntime
from pipelines.settings import AgentCall
from pipelines.trace import TraceRecorder


def runtime(client, sandbox=None):
    return AgentRuntime(client=client, executor=sandbox, recorder=TraceRecorder("t", "q", "d"))


def test_tagged_reply_prefers_the_sql_tag_over_drafts_in_thinking():
    text = "<think>- draft:\n```sql\nSELECT 2\n```\n- better</think>\n<sql>\nSELECT 1;\n</sql>"
    assert parse_tagged_reply(text) == ("SELECT 1", "- draft:\n```sql\nSELECT 2\n```\n- better")


def test_tagged_reply_falls_back_to_a_code_block_and_unclosed_tags():
    assert parse_tagged_reply("<think>- x</think>```sql\nSELECT 3\n```")[0] == "SELECT 3"
    assert parse_tagged_reply("<think>- x</think><sql>SELECT 4")[0] == "SELECT 4"
    with pytest.raises(InvalidModelOutput):
        parse_tagged_reply("<think>no idea</think>")


def test_plain_reply_keeps_bullets_as_rationale():
    reply = "- use t\n- filter\n```sql\nSELECT 1\n```\nDone."
    assert parse_sql_reply(reply) == ("SELECT 1", "- use t\n- filter\n\nDone.")


async def test_same_temperature_samples_share_one_request(scripted):
    client = scripted({"icl/cot": lambda r: [f"```sql\nSELECT {i}\n```" for i in range(r.n)]})
    gen = COT.build(AgentCall(max_tokens=99))
    out = await gen.generate(
        GenerationInput(question="q", schema_text="s"), [0.7, 0.2, 0.7], runtime(client)
    )
    assert sorted((r.temperature, r.n, r.max_tokens) for _, r in client.requests) == [
        (0.2, 1, 99),
        (0.7, 2, 99),
    ]
    assert sorted(c.producer for c in out) == ["icl/cot/T=0.2", "icl/cot/T=0.7", "icl/cot/T=0.7"]
    assert all(
        r.stop == ("\n```\n",) for _, r in client.requests
    )  # generation ends with the SQL block


def test_an_sql_block_cut_at_its_closing_fence_still_parses():
    # What the server returns when it stops on END_OF_SQL_BLOCK: the fence is not included.
    assert parse_sql_reply("- count rows\n```sql\nSELECT count(*) FROM t") == (
        "SELECT count(*) FROM t",
        "- count rows",
    )
    assert parse_tagged_reply("<think>- count</think><sql>SELECT 1") == ("SELECT 1", "- count")


async def test_one_failed_request_keeps_the_others_and_all_failing_raises(scripted):
    client = scripted(
        {
            "reasoning": lambda r: (
                ModelTimeout("slow") if r.temperature > 0.5 else "<sql>SELECT 1</sql>"
            )
        }
    )
    gen = REASONING.build(AgentCall(max_tokens=50))
    inp = GenerationInput(question="q", schema_text="s")
    assert [c.sql for c in await gen.generate(inp, [0.2, 1.0], runtime(client))] == ["SELECT 1"]
    with pytest.raises(ModelTimeout):  # the call's own error, not a parsing complaint
        await gen.generate(inp, [1.0], runtime(client))
    unparsable = scripted({"reasoning": lambda r: "I do not know"})
    with pytest.raises(AgentOutputError):
        await gen.generate(inp, [0.2], runtime(unparsable))


async def test_budget_exhaustion_is_not_swallowed(scripted):
    client = scripted({"reasoning": lambda r: BudgetExceeded("spent")})
    with pytest.raises(BudgetExceeded):
        await REASONING.build(AgentCall()).generate(
            GenerationInput(question="q", schema_text="s"), [0.2], runtime(client)
        )
