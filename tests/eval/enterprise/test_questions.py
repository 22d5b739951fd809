"""The enterprise questions: well-formed, rated, split in two comparable halves, and every gold
query answers on the built database, deterministically and non-trivially.

Gold queries run through the project's read-only sandbox and again on a one-thread connection
(another physical plan): an answer that depends on row order (a tie cut by LIMIT) shows up as a
mismatch. A typed-link question must need its link type: the gold with every ``type``
comparison replaced by TRUE answers differently.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import get_args

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from eval.embedded_benchmark import one_line
from eval.enterprise import EnterpriseBenchmarkError, load_questions
from eval.enterprise.questions import FloorConstruct
from eval.sds import SDS_BUCKETS, sds_bucket
from eval.sql_constructs import CONSTRUCTS, sql_constructs
from pipelines.sandbox import Sandbox, canonical_rows

QUESTIONS = load_questions()


def test_enough_distinct_questions_in_many_voices():
    assert len(QUESTIONS) >= 80
    assert len({q.question for q in QUESTIONS}) == len(QUESTIONS)
    assert len({one_line(q.sql) for q in QUESTIONS}) == len(QUESTIONS)
    personas = Counter(q.persona for q in QUESTIONS)
    assert len(personas) >= 6 and min(personas.values()) >= 5
    for q in QUESTIONS:
        assert q.question.strip()[-1] in "?." and len(q.question.split()) >= 6, q.question


def test_sds_buckets_and_constructs_are_all_represented():
    buckets = Counter(sds_bucket(q.sds_total) for q in QUESTIONS)
    assert set(buckets) == set(SDS_BUCKETS) and min(buckets.values()) >= 10
    tags = Counter(tag for q in QUESTIONS for tag in q.constructs)
    assert tags["unnest"] >= 30 and tags["typed_link"] >= 15
    assert (
        min(tags[name] for name in ("window", "cte", "set_op", "time_window", "enum_filter")) >= 4
    )


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.question[:40])
def test_construct_tags_match_the_gold_sql(q):
    """The tags read off SQL are exactly the ones the question declares."""
    declared = {tag for tag in q.constructs if tag in CONSTRUCTS}
    assert set(sql_constructs(one_line(q.sql))) == declared


def test_halves_are_comparable():
    """Tuning (even positions) and held-out (odd positions) cover every bucket alike."""
    halves = [QUESTIONS[0::2], QUESTIONS[1::2]]
    for bucket in SDS_BUCKETS:
        counts = [sum(sds_bucket(q.sds_total) == bucket for q in half) for half in halves]
        assert min(counts) >= 5 and abs(counts[0] - counts[1]) <= 3, (bucket, counts)
    typed = [sum("typed_link" in q.constructs for q in half) for half in halves]
    assert min(typed) >= 7


def test_the_floor_isolates_each_nested_construct_in_both_halves():
    """Floor questions (SDS 3-8, one construct each) come after the others, so appending them
    left every earlier question in its half, and each construct sits in both halves."""
    floor = [(i, q) for i, q in enumerate(QUESTIONS) if q.floor_construct is not None]
    assert len(floor) >= 30
    assert all(3 <= q.sds_total <= 8 for _, q in floor)
    assert [i for i, _ in floor] == list(range(floor[0][0], len(QUESTIONS)))
    for name in get_args(FloorConstruct):
        positions = [i for i, q in floor if q.floor_construct == name]
        assert min(sum(i % 2 == half for i in positions) for half in (0, 1)) >= 2, name


def test_a_floor_construct_must_be_among_the_questions_constructs(tmp_path):
    entry = (
        "- persona: support lead\n  question: How many tickets were created in May 2025?\n"
        "  sql: SELECT count(*) FROM tickets\n  difficulty: simple\n"
        "  sds: {D1: 0, D2: 0, D3: 0, D4: 0, D5: 1, D6: 2, D7: 0}\n  sds_total: 3\n"
        "  constructs: [time_window]\n  floor_construct: unnest\n"
    )
    path = tmp_path / "questions.yaml"
    path.write_text(entry)
    with pytest.raises(EnterpriseBenchmarkError, match="floor_construct"):
        load_questions(path)


def test_dev_json_mirrors_the_question_file(enterprise):
    records = json.loads(enterprise.dev_json.read_text())
    assert [
        (r["question"], r["persona"], r["sds_total"], r["constructs"], r["construct"])
        for r in records
    ] == [
        (q.question, q.persona, q.sds_total, list(q.constructs), q.floor_construct)
        for q in QUESTIONS
    ]
    named = Counter(r["construct"] for r in records if r["construct"] is not None)
    assert set(named) == set(get_args(FloorConstruct)) and sum(named.values()) == 36


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(timeout_s=30, row_cap=10_000) as box:
        yield box


@pytest.fixture(scope="module")
def one_thread(enterprise):
    con = duckdb.connect(str(enterprise.database), read_only=True, config={"threads": 1})
    yield con
    con.close()


def _informative(rows) -> bool:
    """Not just a zero count or a NULL aggregate: a misspelled literal would give those."""
    return any(cell not in (0, None) for row in rows for cell in row)


def without_link_types(sql: str) -> str:
    """``sql`` with every comparison on a ``type`` sub-field replaced by TRUE."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    for node in list(tree.find_all(exp.EQ, exp.In)):
        if isinstance(node.this, exp.Column) and node.this.name.lower() == "type":
            node.replace(exp.true())
    return tree.sql(dialect="duckdb")


@pytest.mark.parametrize("index", range(len(QUESTIONS)), ids=lambda i: f"q{i:03d}")
def test_gold_query_answers_deterministically(index, enterprise, sandbox, one_thread):
    q = QUESTIONS[index]
    sql = one_line(q.sql)
    first = sandbox.execute(sql, enterprise.database_ref())
    assert first.error is None, first.error
    assert first.row_count >= 1 and not first.truncated
    assert _informative(first.rows), first.rows

    again = canonical_rows(one_thread.execute(sql).fetchall(), keep_order=True)
    if sqlglot.parse_one(sql, read="duckdb").args.get("order") is not None:
        assert again == list(first.rows)
    else:
        assert sorted(map(repr, again)) == sorted(map(repr, first.rows))

    if "typed_link" in q.constructs:
        untyped = sandbox.execute(without_link_types(sql), enterprise.database_ref())
        assert untyped.error is None and untyped.hash != first.hash


def test_gold_queries_leave_the_database_unchanged(enterprise):
    before = enterprise.database.stat().st_mtime_ns
    with Sandbox(timeout_s=30, row_cap=100) as box:
        for q in QUESTIONS[:5]:
            box.execute(one_line(q.sql), enterprise.database_ref())
    assert enterprise.database.stat().st_mtime_ns == before
