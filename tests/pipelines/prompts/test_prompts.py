"""Every prompt file loads, has the placeholders its agent fills, and refuses missing values."""

from __future__ import annotations

import os

import pytest

from pipelines.prompts import PROMPT_DIR, SHARED_SYSTEM, PromptError, load_prompt

EXPECTED = {
    "single_pass": {"dialect", "schema", "cells", "examples", "question", "evidence"},
    "keyword_extractor": {"question", "evidence"},
    "reasoning_generator": {"dialect", "schema", "lessons", "question", "evidence"},
    "icl_direct": {"dialect", "schema", "cells", "examples", "lessons", "question", "evidence"},
    "icl_cot": {"dialect", "schema", "cells", "examples", "lessons", "question", "evidence"},
    "icl_decompose": {"dialect", "schema", "cells", "examples", "lessons", "question", "evidence"},
    "sql_fixer": {"dialect", "schema", "question", "evidence", "sql", "error", "earlier"},
    "critique": {
        "schema",
        "question",
        "evidence",
        "sql",
        "rationale",
        "preview",
        "size",
        "total",
        "others",
    },
    "sql_revisor": {
        "dialect",
        "schema",
        "question",
        "evidence",
        "sql",
        "preview",
        "error_class",
        "suggested_fix",
        "others",
    },
    "explain_answer": {"question", "evidence", "dialect", "sql", "row_count", "columns", "rows"},
    "answer_judge": {"question", "evidence", "dialect", "sql", "preview"},
    "plan_verifier": {"schema", "dialect", "question", "evidence", "sql"},
    "semantic_validator": {"question", "evidence", "sql", "preview"},
    "agentic_generator": {
        "dialect",
        "schema",
        "examples",
        "cells",
        "rules",
        "history",
        "evidence",
        "question",
    },
    "entity_selector": {"catalog", "question", "evidence", "limit"},
    "reasoning_selector": {
        "schema",
        "question",
        "evidence",
        "sql_a",
        "preview_a",
        "sql_b",
        "preview_b",
    },
}


# The agents that read the schema: their prompts must open with byte-identical text. The
# agentic generator's system message is its own (the entities it was given, how to read nested
# columns): its calls on one question share it with each other, not with the other agents.
SCHEMA_AGENTS = sorted(
    name
    for name, fields in EXPECTED.items()
    if "schema" in fields and name not in ("single_pass", "agentic_generator")
)


def test_every_prompt_file_is_known():
    assert {p.stem for p in PROMPT_DIR.glob("*.md")} == set(EXPECTED) | {SHARED_SYSTEM}


def test_every_schema_agent_sends_the_same_system_message_so_the_schema_cache_is_reused():
    systems = set()
    for name in SCHEMA_AGENTS:
        values = dict.fromkeys(EXPECTED[name], "x") | {
            "schema": "## singer\n| column | type |",
            "dialect": "SQLite",
        }
        system, user = load_prompt(name).render(**values)
        systems.add(system.content)
        assert "## singer" not in user.content  # the schema is sent once, in the shared part
    assert len(systems) == 1 and "## singer" in systems.pop()


def test_the_icl_strategies_share_cells_and_examples_after_the_system_message():
    values = dict.fromkeys(EXPECTED["icl_direct"], "") | {
        "schema": "s",
        "dialect": "SQLite",
        "cells": "Database values: x",
        "examples": "Question: q\nSQL: s",
        "question": "How many?",
    }
    users = [
        load_prompt(f"icl_{s}").render(**values)[1].content for s in ("direct", "cot", "decompose")
    ]
    prefix = os.path.commonprefix(users)
    assert "Database values: x" in prefix and "SQL: s" in prefix and "How many?" not in prefix


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_placeholders(name):
    assert load_prompt(name).placeholders == EXPECTED[name]


def test_render_drops_empty_sections_and_refuses_missing_values():
    prompt = load_prompt("reasoning_generator")
    values = dict.fromkeys(EXPECTED["reasoning_generator"], "") | {
        "question": "How many?",
        "schema": "CREATE TABLE t",
    }
    system, user = prompt.render(**values)
    assert system.role == "system" and "\n\n\n" not in user.content and "How many?" in user.content
    with pytest.raises(PromptError, match="question"):
        prompt.render(**{k: v for k, v in values.items() if k != "question"})
    with pytest.raises(PromptError):
        load_prompt("no_such_prompt")
