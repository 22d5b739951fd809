"""The endpoint with a PostgreSQL database registered by URI (a real server, ``tests/conftest.py``):
registration checks the role, and a question is answered from the server."""

from __future__ import annotations

from tests.serve.conftest import ADMIN_KEY, FakeModel, auth, explanation_json, keys_ring

COUNT_SQL = "SELECT count(*) AS n FROM claims WHERE status = 'denied'"
GOOD = explanation_json("1 claim was denied.")


def test_a_postgres_database_registers_by_uri_and_answers(make_app, postgres):
    client, _, _ = make_app(FakeModel(COUNT_SQL, GOOD), ring=keys_ring())
    body = {"name": "typed", "path": postgres.uri("typed")}
    created = client.post("/v1/databases", json=body, headers=auth(ADMIN_KEY))
    assert created.status_code == 201, created.text
    assert created.json()["engine"] == "postgres"
    answer = client.post(
        "/v1/query",
        json={"question": "How many claims were denied?", "database": "typed"},
        headers=auth(ADMIN_KEY),
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["rows"] == [[1]]


def test_a_postgres_database_registers_with_its_own_examples_file(make_app, postgres, tmp_path):
    client, _, _ = make_app(FakeModel(COUNT_SQL, GOOD), ring=keys_ring())
    body = {"name": "typed", "path": postgres.uri("typed"), "examples": str(tmp_path / "no.yml")}
    refused = client.post("/v1/databases", json=body, headers=auth(ADMIN_KEY))
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "no_examples_file"
    assert str(tmp_path) not in refused.text
    examples = tmp_path / "typed.examples.yml"
    examples.write_text(f"- question: How many claims were denied?\n  sql: {COUNT_SQL}\n")
    created = client.post(
        "/v1/databases", json={**body, "examples": str(examples)}, headers=auth(ADMIN_KEY)
    )
    assert created.status_code == 201, created.text
    answer = client.post(
        "/v1/query",
        json={"question": "How many claims were denied?", "database": "typed"},
        headers=auth(ADMIN_KEY),
    )
    assert answer.status_code == 200 and answer.json()["rows"] == [[1]]


def test_a_role_that_can_write_is_not_registered(make_app, postgres):
    client, _, _ = make_app(FakeModel(COUNT_SQL, GOOD), ring=keys_ring())
    body = {"name": "typed", "path": postgres.uri("typed", "postgres")}
    refused = client.post("/v1/databases", json=body, headers=auth(ADMIN_KEY))
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "unsafe_role"
