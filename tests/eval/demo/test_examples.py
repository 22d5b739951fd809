"""The demo database's own solved examples: they answer, they are no test question, and the build
writes them beside the database where ``own_examples`` finds them.

Example SQL runs through the project's read-only sandbox, and again with SQLite's
``reverse_unordered_selects``, as the gold queries do (``test_questions.py``): an example must be
a correct, deterministic answer, since a pipeline shows it to the model as one.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter

import pytest
import sqlglot

from eval.demo import DEMO_DB_ID, DemoBenchmarkError, build_demo, load_examples, load_questions
from eval.embedded_benchmark import normalize_question
from pipelines.indexing.examples.own_examples import own_examples_of
from pipelines.sandbox import Sandbox, canonical_rows

EXAMPLES = load_examples()
QUESTIONS = load_questions()


def _one_line(sql: str) -> str:
    return " ".join(sql.split())


def test_a_mix_of_distinct_examples():
    assert len(EXAMPLES) == 24
    assert Counter(e.difficulty for e in EXAMPLES) == {
        "simple": 8,
        "moderate": 10,
        "challenging": 6,
    }
    assert len({normalize_question(e.question) for e in EXAMPLES}) == len(EXAMPLES)
    for e in EXAMPLES:
        assert e.question.strip()[-1] in "?." and len(e.question.split()) >= 5, e.question


def test_no_example_is_a_test_question():
    tests = {normalize_question(q.question) for q in QUESTIONS}
    gold = {_one_line(q.sql).lower() for q in QUESTIONS}
    for e in EXAMPLES:
        assert normalize_question(e.question) not in tests, e.question
        assert _one_line(e.sql).lower() not in gold, e.question


def test_normalized_comparison_ignores_case_and_punctuation():
    assert normalize_question("How many claims were  DENIED?") == normalize_question(
        "how many claims were denied"
    )


def test_an_examples_file_holding_a_test_question_is_refused(tmp_path):
    leaked = tmp_path / "examples.yaml"
    q = QUESTIONS[0]
    leaked.write_text(
        f"- question: {q.question.upper()}\n  difficulty: simple\n  sql: SELECT 1\n",
        encoding="utf-8",
    )
    with pytest.raises(DemoBenchmarkError, match="test question"):
        load_examples(leaked)


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(timeout_s=30, row_cap=10_000) as box:
        yield box


@pytest.fixture(scope="module")
def reversed_scans(demo):
    con = sqlite3.connect(f"file:{demo.database}?mode=ro", uri=True)
    con.execute("PRAGMA reverse_unordered_selects = ON")
    yield con
    con.close()


@pytest.mark.parametrize("index", range(len(EXAMPLES)), ids=lambda i: f"ex{i:02d}")
def test_example_sql_answers_deterministically(index, demo, sandbox, reversed_scans):
    sql = _one_line(EXAMPLES[index].sql)
    result = sandbox.execute(sql, demo.database_ref())
    assert result.error is None, result.error
    assert result.row_count >= 1 and not result.truncated
    # Not only zeros or NULLs: a misspelled code value would give those.
    assert any(cell not in (0, None) for row in result.rows for cell in row), result.rows

    flipped = canonical_rows(reversed_scans.execute(sql).fetchall(), keep_order=True)
    if sqlglot.parse_one(sql, read="sqlite").args.get("order") is not None:
        assert flipped == list(result.rows)
    else:
        assert sorted(map(repr, flipped)) == sorted(map(repr, result.rows))


def test_the_build_writes_the_own_examples_of_the_database(demo):
    assert demo.examples_file == demo.database.with_name(f"{DEMO_DB_ID}.examples.yml")
    found = own_examples_of(demo.database_ref())
    assert [(e.question, e.evidence, e.sql) for e in found] == [
        (_one_line(e.question), _one_line(e.evidence), _one_line(e.sql)) for e in EXAMPLES
    ]


def test_a_missing_or_stale_examples_file_is_rewritten_without_a_rebuild(demo, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(demo.data_dir, copy)
    paths = build_demo(copy)
    expected = paths.examples_file.read_text(encoding="utf-8")
    before = paths.database.stat()

    paths.examples_file.unlink()  # a build from before the examples existed
    assert not build_demo(copy).rebuilt
    assert paths.examples_file.read_text(encoding="utf-8") == expected

    paths.examples_file.write_text("- question: old\n  sql: SELECT 1\n", encoding="utf-8")
    assert not build_demo(copy).rebuilt
    assert paths.examples_file.read_text(encoding="utf-8") == expected

    after = paths.database.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not list(copy.rglob("*.tmp"))
