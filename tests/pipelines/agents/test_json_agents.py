"""JSON-constrained agents: extractor, critic, selector — schema sent, replies validated."""

from __future__ import annotations

import json

import pytest

from pipelines.agents.critique_agent import CritiqueAgent, CritiqueInput
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.keyword_extractor import UNDERSTANDING_SCHEMA, KeywordSkeletonExtractor
from pipelines.agents.reasoning_selector import ReasoningSelector, SelectionInput
from pipelines.agents.runtime import AgentRuntime
from pipelines.contracts import ErrorClass
from pipelines.settings import AgentCall
from pipelines.trace import TraceRecorder


def runtime(client):
    return AgentRuntime(client=client, executor=None, recorder=TraceRecorder("t", "q", "d"))


async def test_extractor_is_constrained_and_keeps_only_real_literals(scripted):
    reply = {
        "literals": ["France", "Germany", " "],
        "skeleton": " How many [COL] from _? ",
        "keywords": ["singers"],
    }
    client = scripted({"extractor": lambda r: json.dumps(reply)})
    u = await KeywordSkeletonExtractor(settings=AgentCall(temperature=0.2, max_tokens=64)).extract(
        "How many singers from France?", "", runtime(client)
    )
    ((_, request),) = client.requests
    assert (
        request.json_schema["required"] == ["literals", "skeleton", "keywords"]
        and request.temperature == 0.2
    )
    assert u.literals == ("France",)  # "Germany" is not in the question: a hallucinated literal
    assert u.skeleton == "How many [COL] from _?"


def test_extractor_schema_bounds_every_string_and_list():
    # Grammar-constrained decoding of an unbounded field can loop until max_tokens cuts the JSON.
    def unbounded(node, path="$"):
        if node.get("type") == "string" and "maxLength" not in node:
            yield path
        if node.get("type") == "array":
            if "maxItems" not in node:
                yield path
            yield from unbounded(node["items"], path + "[]")
        for name, child in node.get("properties", {}).items():
            yield from unbounded(child, f"{path}.{name}")

    assert list(unbounded(UNDERSTANDING_SCHEMA)) == []


async def test_extractor_rejects_malformed_json(scripted):
    client = scripted({"extractor": lambda r: '{"literals": "France"}'})
    with pytest.raises(AgentOutputError):
        await KeywordSkeletonExtractor(settings=AgentCall()).extract("q", "", runtime(client))


def critique_input():
    return CritiqueInput(
        question="q",
        schema_text="s",
        bucket_hash="h1",
        sql="SELECT 1",
        rationale="",
        preview="1 rows",
        size=2,
        total=5,
        others="",
    )


async def test_critique_maps_none_to_no_error_class(scripted):
    reply = {
        "error_class": "none",
        "suggested_fix": "",
        "generator_feedback": "",
        "feedback_kind": "warning",
        "complexity": 3,
        "verdict": "accept",
    }
    client = scripted({"critic": lambda r: json.dumps(reply)})
    c = await CritiqueAgent(settings=AgentCall()).critique(critique_input(), runtime(client))
    assert c.error_class is None and c.bucket_hash == "h1" and not c.forced
    reply |= {"error_class": "wrong_join", "verdict": "edit"}
    client = scripted({"critic": lambda r: json.dumps(reply)})
    c = await CritiqueAgent(settings=AgentCall()).critique(critique_input(), runtime(client))
    assert c.error_class is ErrorClass.wrong_join
    assert "2 of 5 attempts" in client.requests[0][1].messages[-1].content


@pytest.mark.parametrize("bad", [{"error_class": "typo"}, {"complexity": 11}, {"verdict": "maybe"}])
async def test_critique_outside_the_closed_enums_is_rejected(scripted, bad):
    reply = {
        "error_class": "other",
        "suggested_fix": "",
        "generator_feedback": "",
        "feedback_kind": "warning",
        "complexity": 3,
        "verdict": "edit",
    } | bad
    client = scripted({"critic": lambda r: json.dumps(reply)})
    with pytest.raises(AgentOutputError):
        await CritiqueAgent(settings=AgentCall()).critique(critique_input(), runtime(client))


async def test_selector_returns_the_winner(scripted):
    client = scripted({"selector": lambda r: json.dumps({"reason": "B filters", "winner": "B"})})
    inp = SelectionInput(
        question="q",
        schema_text="s",
        sql_a="SELECT 1",
        preview_a="1",
        sql_b="SELECT 2",
        preview_b="2",
    )
    assert await ReasoningSelector(settings=AgentCall()).choose(inp, runtime(client)) == "B"
    client = scripted({"selector": lambda r: json.dumps({"reason": "?", "winner": "C"})})
    with pytest.raises(AgentOutputError):
        await ReasoningSelector(settings=AgentCall()).choose(inp, runtime(client))
