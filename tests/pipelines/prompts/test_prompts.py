"""Every prompt file loads, has the placeholders its agent fills, and refuses missing values."""

from __future__ import annotations

import pytest

from pipelines.prompts import PROMPT_DIR, PromptError, load_prompt

EXPECTED = {
    "single_pass": {"dialect", "schema", "question", "evidence"},
    "keyword_extractor": {"question", "evidence"},
    "reasoning_generator": {"dialect", "schema", "lessons", "question", "evidence"},
    "icl_direct": {"dialect", "schema", "cells", "examples", "lessons", "question", "evidence"},
    "icl_cot": {"dialect", "schema", "cells", "examples", "lessons", "question", "evidence"},
    "icl_decompose": {"dialect", "schema", "cells", "examples", "lessons", "question", "evidence"},
    "sql_fixer": {"dialect", "schema", "question", "evidence", "sql", "error", "earlier"},
    "critique": {"schema", "question", "evidence", "sql", "rationale", "preview", "size", "total", "others"},
    "sql_revisor": {"dialect", "schema", "question", "evidence", "sql", "preview", "error_class", "suggested_fix",
                    "others"},
    "reasoning_selector": {"schema", "question", "evidence", "sql_a", "preview_a", "sql_b", "preview_b"},
}


def test_every_prompt_file_is_known():
    assert {p.stem for p in PROMPT_DIR.glob("*.md")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_placeholders(name):
    assert load_prompt(name).placeholders == EXPECTED[name]


def test_render_drops_empty_sections_and_refuses_missing_values():
    prompt = load_prompt("reasoning_generator")
    values = dict.fromkeys(EXPECTED["reasoning_generator"], "") | {"question": "How many?", "schema": "CREATE TABLE t"}
    system, user = prompt.render(**values)
    assert system.role == "system" and "\n\n\n" not in user.content and "How many?" in user.content
    with pytest.raises(PromptError, match="question"):
        prompt.render(**{k: v for k, v in values.items() if k != "question"})
    with pytest.raises(PromptError):
        load_prompt("no_such_prompt")
