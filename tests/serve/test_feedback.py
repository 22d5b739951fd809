"""Feedback on answers: ``POST /v1/queries/{id}/feedback`` (who may give it, what a rejection
does to the cache), the query log's ``accepted`` column (and its migration into an older state
file), and accepted answers as the database's own solved examples."""

from __future__ import annotations

import sqlite3

from pipelines.indexing.examples.own_examples import SolvedExample
from serve.databases import database_ref
from serve.store import FILE_NAME, LogEntry, StateStore
from tests.serve.conftest import ADMIN_KEY, ANALYST_KEY, QUESTION, FakeModel, auth, keys_ring

COUNT_SQL = "SELECT COUNT(*) FROM singer WHERE country = 'France'"
GOOD = '{"explanation": "2 singers are from France.", "assumptions": []}'

# The state file as versions before feedback wrote it: no accepted, no cache_key.
OLD_SCHEMA = """
CREATE TABLE databases (
    name TEXT PRIMARY KEY, path TEXT NOT NULL, engine TEXT NOT NULL,
    description_dir TEXT, source TEXT NOT NULL, added_unix REAL NOT NULL);
CREATE TABLE cache (key TEXT PRIMARY KEY, answer TEXT NOT NULL, expires_unix REAL NOT NULL);
CREATE TABLE query_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at_unix REAL NOT NULL, key_id TEXT NOT NULL,
    database TEXT NOT NULL, profile TEXT NOT NULL, question TEXT NOT NULL, sql TEXT NOT NULL,
    result_hash TEXT, row_count INTEGER, latency_s REAL NOT NULL, cached INTEGER NOT NULL,
    degraded INTEGER NOT NULL, trace_id TEXT);
CREATE TABLE traces (
    trace_id TEXT PRIMARY KEY, at_unix REAL NOT NULL, database TEXT NOT NULL, trace TEXT NOT NULL);
INSERT INTO query_log (at_unix, key_id, database, profile, question, sql, result_hash,
    row_count, latency_s, cached, degraded, trace_id)
VALUES (1.0, 'analyst', 'concerts', 'fast', 'How many singers?', 'SELECT COUNT(*) FROM singer',
    'h1', 1, 0.5, 0, 0, 'abc');
"""


def entry(question: str, sql: str, database: str = "concerts", key_id: str = "analyst"):
    return LogEntry(
        key_id=key_id, database=database, profile="fast", question=question, sql=sql, latency_s=0
    )


def ask(client, headers=None, question=QUESTION):
    return client.post(
        "/v1/query", json={"question": question, "database": "concerts"}, headers=headers
    )


def feedback(client, query_id, accepted, headers=None):
    return client.post(
        f"/v1/queries/{query_id}/feedback", json={"accepted": accepted}, headers=headers
    )


# --- the store ------------------------------------------------------------------------------


def test_an_old_state_files_databases_gain_an_examples_file(tmp_path):
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    conn.executescript(OLD_SCHEMA)
    conn.execute(
        "INSERT INTO databases VALUES ('old', '/d/old.sqlite', 'sqlite', NULL, 'admin', 1)"
    )
    conn.commit()
    conn.close()

    store = StateStore(tmp_path)
    assert store.database("old").examples is None and store.database("old").path == "/d/old.sqlite"
    named = store.database("old").model_copy(update={"name": "new", "examples": "/d/new.yml"})
    store.put_database(named)
    assert store.database("new") == named
    assert database_ref("new", store.database("new")).examples == "/d/new.yml"


def test_an_old_state_file_gains_the_feedback_columns_and_keeps_its_rows(tmp_path):
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    conn.executescript(OLD_SCHEMA)
    conn.commit()
    conn.close()

    store = StateStore(tmp_path)
    StateStore(tmp_path)  # opening again (another replica) changes nothing
    with sqlite3.connect(tmp_path / FILE_NAME) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(query_log)")]
    assert columns[-2:] == ["accepted", "cache_key"] and columns.count("accepted") == 1

    [old] = store.query_log()
    assert old.question == "How many singers?" and old.result_hash == "h1"
    assert old.trace_id == "abc" and old.accepted is None and old.cache_key is None
    assert old.id == 1
    assert store.set_feedback(1, True) and store.logged_query(1).accepted is True
    new_id = store.log_query(entry("How many concerts?", "SELECT COUNT(*) FROM concert"))
    assert new_id == 2 and [e.id for e in store.query_log()] == [2, 1]
    assert store.accepted_examples("concerts") == [
        SolvedExample(question="How many singers?", sql="SELECT COUNT(*) FROM singer")
    ]


def test_accepted_examples_are_the_newest_accepted_answer_per_question(tmp_path):
    store = StateStore(tmp_path)

    def judged(question, sql, accepted, database="concerts"):
        query_id = store.log_query(entry(question, sql, database))
        if accepted is not None:
            store.set_feedback(query_id, accepted)

    judged("How many singers?", "SELECT 1", True)
    judged("How many singers?", "SELECT 2", True)  # newer: wins
    judged("how many  SINGERS", "SELECT 3", False)  # the same question, rejected: no say
    judged("Oldest singer?", "SELECT 4", False)  # only rejected
    judged("Youngest singer?", "SELECT 5", None)  # no feedback
    judged("Concerts in 2014?", "SELECT 6", True, database="sales")  # another database
    judged("Singers from France?", "SELECT 7", True)
    judged("Singers from France?", "SELECT 7", False)  # the same SQL rejected later
    judged("Singers from China?", "SELECT 8", True)
    judged("Singers from China?", "SELECT 9", False)  # a different SQL rejected later
    judged("Singers from USA?", "SELECT 10", False)
    judged("Singers from USA?", "SELECT 10", True)  # accepted after its rejection

    assert store.accepted_examples("concerts") == [
        SolvedExample(question="Singers from USA?", sql="SELECT 10"),
        SolvedExample(question="Singers from China?", sql="SELECT 8"),
        SolvedExample(question="How many singers?", sql="SELECT 2"),
    ]
    assert [e.sql for e in store.accepted_examples("concerts", limit=2)] == [
        "SELECT 10",
        "SELECT 8",
    ]
    assert store.accepted_examples("sales") == [
        SolvedExample(question="Concerts in 2014?", sql="SELECT 6")
    ]
    assert store.accepted_examples("nothing") == []


def test_a_rejection_is_the_latest_feedback_on_that_cache_key_and_sql(tmp_path):
    store = StateStore(tmp_path)
    first = store.log_query(entry("q", "SELECT 1").model_copy(update={"cache_key": "k"}))
    assert not store.was_rejected("k", "SELECT 1")
    store.set_feedback(first, False)
    assert store.was_rejected("k", "SELECT 1") and not store.was_rejected("k", "SELECT 2")
    second = store.log_query(entry("q", "SELECT 1").model_copy(update={"cache_key": "k"}))
    store.set_feedback(second, True)
    assert not store.was_rejected("k", "SELECT 1")
    store.put_cached("k", {"x": 1}, ttl_s=60)
    assert store.drop_cached("k") and store.get_cached("k") is None and not store.drop_cached("k")


# --- the endpoint ---------------------------------------------------------------------------


def test_the_asker_accepts_an_answer_and_it_becomes_an_example_of_its_database(make_app):
    client, engine, settings = make_app(FakeModel(COUNT_SQL, GOOD), ring=keys_ring())
    body = ask(client, auth(ANALYST_KEY)).json()
    query_id = body["query_id"]
    assert isinstance(query_id, int) and body["trace_id"]  # the existing fields stay

    response = feedback(client, query_id, True, auth(ANALYST_KEY))
    assert response.status_code == 200, response.text
    assert response.json() == {"query_id": query_id, "accepted": True}
    store = StateStore(settings.state_dir)
    assert store.logged_query(query_id).accepted is True
    assert store.accepted_examples("concerts") == [SolvedExample(question=QUESTION, sql=COUNT_SQL)]

    # the pipeline deployment's retriever reads them by the registered name
    db = database_ref("concerts", store.database("concerts"))
    assert engine.own_examples().examples(db) == (SolvedExample(question=QUESTION, sql=COUNT_SQL),)
    assert engine._pipeline("balanced").own_examples is engine.own_examples()

    cached = ask(client, auth(ANALYST_KEY)).json()  # a cached answer gets its own log id
    assert cached["cached"] is True and cached["query_id"] not in (None, query_id)


def test_a_rejected_answer_leaves_the_cache(make_app):
    model = FakeModel(COUNT_SQL, GOOD)
    client, _, settings = make_app(model)
    first = ask(client).json()
    second = ask(client).json()
    assert second["cached"] is True and model.calls.count("sql") == 1

    assert feedback(client, second["query_id"], False).json()["accepted"] is False
    assert StateStore(settings.state_dir).logged_query(second["query_id"]).accepted is False
    third = ask(client).json()
    assert third["cached"] is False and model.calls.count("sql") == 2
    # the same SQL again is not cached again: it was rejected for this question
    fourth = ask(client).json()
    assert fourth["cached"] is False and model.calls.count("sql") == 3
    assert StateStore(settings.state_dir).accepted_examples("concerts") == []

    # accepting a newer answer with the same SQL lets the cache keep it once more
    assert feedback(client, first["query_id"], True).status_code == 200  # older: no say
    assert ask(client).json()["cached"] is False
    assert feedback(client, fourth["query_id"], True).status_code == 200
    ask(client)
    assert ask(client).json()["cached"] is True


def test_feedback_on_an_unknown_or_another_keys_query_is_404(make_app):
    client, _, _ = make_app(FakeModel(COUNT_SQL, GOOD), ring=keys_ring())
    query_id = ask(client, auth(ANALYST_KEY)).json()["query_id"]
    for path_id, headers in [
        (query_id + 1000, auth(ANALYST_KEY)),  # no such answer
        ("abc", auth(ANALYST_KEY)),
        ("0", auth(ANALYST_KEY)),
        (query_id, auth(ADMIN_KEY)),  # the admin key did not ask it
    ]:
        response = feedback(client, path_id, True, headers)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "unknown_query"
    assert feedback(client, query_id, True).status_code == 401
    bad = feedback(client, query_id, "yes", auth(ANALYST_KEY))
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_request"
    empty = client.post(f"/v1/queries/{query_id}/feedback", json={}, headers=auth(ANALYST_KEY))
    assert empty.status_code == 422
    assert feedback(client, query_id, False, auth(ANALYST_KEY)).status_code == 200


def test_the_streamed_answer_carries_its_query_id(make_app):
    import json

    client, _, _ = make_app(FakeModel(COUNT_SQL, GOOD))
    body = {"question": QUESTION, "database": "concerts"}
    with client.stream("POST", "/v1/query/stream", json=body) as response:
        text = "".join(response.iter_text())
    last = text.strip().split("\n\n")[-1].split("\n")
    assert last[0] == "event: answer"
    query_id = json.loads(last[1][len("data: ") :])["query_id"]
    assert isinstance(query_id, int)
    assert feedback(client, query_id, True).status_code == 200
    spec = client.get("/openapi.json").json()
    assert "/v1/queries/{query_id}/feedback" in spec["paths"]
