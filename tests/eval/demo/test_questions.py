"""The hand-written demo questions: well-formed, balanced, and every gold query answers.

Gold queries run through the project's read-only sandbox; a second run with SQLite's
``reverse_unordered_selects`` flips the order of every unordered scan, so an answer that
depends on physical row order (e.g. a tie cut by LIMIT) shows up as a mismatch.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

import pytest
import sqlglot

from eval.demo import DEMO_DB_ID, load_questions
from eval.loaders import load_benchmark
from eval.loaders.common import BenchmarkSpec
from pipelines.sandbox import Sandbox, canonical_rows

QUESTIONS = load_questions()
# Questions that use one of these terms must say what it means.
DOMAIN_TERMS = (
    "pmpm",
    "denial rate",
    "readmission",
    "claim lag",
    "dispensing rate",
    "cost of care",
    "length of stay",
    "dependents",
    "covering at least",
)


def test_enough_distinct_questions_with_a_balanced_difficulty_mix():
    assert len(QUESTIONS) >= 60
    assert len({q.question for q in QUESTIONS}) == len(QUESTIONS)
    assert len({" ".join(q.sql.split()) for q in QUESTIONS}) == len(QUESTIONS)
    share = {k: n / len(QUESTIONS) for k, n in Counter(q.difficulty for q in QUESTIONS).items()}
    assert 0.3 <= share["simple"] <= 0.5
    assert 0.3 <= share["moderate"] <= 0.5
    assert 0.12 <= share["challenging"] <= 0.3
    for q in QUESTIONS:
        assert q.question.strip()[-1] in "?." and len(q.question.split()) >= 5, q.question


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.question[:40])
def test_domain_terms_come_with_evidence(q):
    if any(term in q.question.lower() for term in DOMAIN_TERMS):
        assert q.evidence.strip(), q.question


def test_dev_json_mirrors_the_question_file(demo):
    records = json.loads(demo.dev_json.read_text())
    assert [(r["question"], r["evidence"], r["difficulty"]) for r in records] == [
        (q.question, q.evidence, q.difficulty) for q in QUESTIONS
    ]
    assert all("\n" not in r["SQL"] for r in records)  # one line, as BIRD's predict files need


def test_bird_and_demo_loaders_read_the_build(demo):
    built = demo.database.stat().st_mtime_ns
    for kind in ("bird", "demo"):
        bench = load_benchmark(BenchmarkSpec(name="demo", kind=kind, data_dir=str(demo.data_dir)))
        assert len(bench.tasks) == len(QUESTIONS) and not bench.skipped
        assert {t.db.db_id for t in bench.tasks} == {DEMO_DB_ID}
        assert bench.tasks[0].db.description_dir == str(demo.description_dir)
    assert demo.database.stat().st_mtime_ns == built  # the demo loader reused the build


@pytest.fixture(scope="module")
def gold(demo) -> list[str]:
    return [r["SQL"] for r in json.loads(demo.dev_json.read_text())]


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


def _informative(rows) -> bool:
    """Not just a zero count or a NULL aggregate: a misspelled literal would give those."""
    return any(cell not in (0, None) for row in rows for cell in row)


@pytest.mark.parametrize("index", range(len(QUESTIONS)), ids=lambda i: f"q{i:02d}")
def test_gold_query_answers_deterministically(index, gold, demo, sandbox, reversed_scans):
    sql = gold[index]
    first = sandbox.execute(sql, demo.database_ref())
    second = sandbox.execute(sql, demo.database_ref())
    assert first.error is None, first.error
    assert first.row_count >= 1 and not first.truncated
    assert _informative(first.rows), first.rows
    assert (second.hash, second.rows) == (first.hash, first.rows)

    flipped = canonical_rows(reversed_scans.execute(sql).fetchall(), keep_order=True)
    ordered = sqlglot.parse_one(sql, read="sqlite").args.get("order") is not None
    if ordered:
        assert flipped == list(first.rows)
    else:
        assert sorted(map(repr, flipped)) == sorted(map(repr, first.rows))
