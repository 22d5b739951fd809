"""The workitems database's own solved examples: they answer, they are no test question, and the
build writes them beside the database where ``own_examples`` finds them."""

from __future__ import annotations

import shutil

import pytest

from eval.embedded_benchmark import normalize_question, one_line
from eval.enterprise import (
    ENTERPRISE_DB_ID,
    EnterpriseBenchmarkError,
    build_enterprise,
    load_examples,
    load_questions,
)
from pipelines.indexing.examples.own_examples import own_examples_of
from pipelines.sandbox import Sandbox

EXAMPLES = load_examples()
QUESTIONS = load_questions()


def test_a_handful_of_distinct_examples():
    assert 8 <= len(EXAMPLES) <= 15
    assert len({normalize_question(e.question) for e in EXAMPLES}) == len(EXAMPLES)


def test_no_example_is_a_test_question():
    tests = {normalize_question(q.question) for q in QUESTIONS}
    gold = {one_line(q.sql) for q in QUESTIONS}
    for e in EXAMPLES:
        assert normalize_question(e.question) not in tests, e.question
        assert one_line(e.sql) not in gold, e.question


def test_an_examples_file_holding_a_test_question_is_refused(tmp_path):
    leaked = tmp_path / "examples.yaml"
    leaked.write_text(f"- question: {QUESTIONS[0].question.upper()}\n  sql: SELECT 1\n")
    with pytest.raises(EnterpriseBenchmarkError, match="test question"):
        load_examples(leaked)


@pytest.mark.parametrize("index", range(len(EXAMPLES)), ids=lambda i: f"ex{i:02d}")
def test_example_sql_answers(index, enterprise):
    with Sandbox(timeout_s=30, row_cap=10_000) as box:
        result = box.execute(one_line(EXAMPLES[index].sql), enterprise.database_ref())
    assert result.error is None, result.error
    assert result.row_count >= 1 and not result.truncated
    assert any(cell not in (0, None) for row in result.rows for cell in row), result.rows


def test_the_build_writes_the_own_examples_of_the_database(enterprise):
    assert enterprise.examples_file == enterprise.database.with_name(
        f"{ENTERPRISE_DB_ID}.examples.yml"
    )
    found = own_examples_of(enterprise.database_ref())
    assert [(e.question, e.sql) for e in found] == [
        (" ".join(e.question.split()), one_line(e.sql)) for e in EXAMPLES
    ]


def test_a_missing_or_stale_examples_file_is_rewritten_without_a_rebuild(enterprise, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(enterprise.data_dir, copy)
    paths = build_enterprise(copy)
    expected = paths.examples_file.read_text(encoding="utf-8")
    before = paths.database.stat()
    paths.examples_file.unlink()
    assert not build_enterprise(copy).rebuilt
    assert paths.examples_file.read_text(encoding="utf-8") == expected
    paths.examples_file.write_text("- question: old\n  sql: SELECT 1\n", encoding="utf-8")
    assert not build_enterprise(copy).rebuilt
    assert paths.examples_file.read_text(encoding="utf-8") == expected
    after = paths.database.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
