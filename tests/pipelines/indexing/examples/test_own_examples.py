from __future__ import annotations

import json

import numpy as np

from pipelines.contracts import DatabaseRef
from pipelines.indexing.examples.own_examples import (
    OwnExampleRetriever,
    SolvedExample,
    own_examples_of,
)

YAML = """
- question: How many members live in Ohio?
  sql: SELECT COUNT(*) FROM members WHERE state = 'OH'
- question: Which plans were retired?
  evidence: A retired plan has a retired_date.
  sql: SELECT plan_name FROM plans WHERE retired_date IS NOT NULL
- question: no sql here
"""


def _db(tmp_path) -> DatabaseRef:
    return DatabaseRef(db_id="claims", path=str(tmp_path / "claims.sqlite"))


def words(texts):
    """A stand-in embedder: one axis per topic word."""
    axes = ("member", "plan", "claim")
    rows = [[float(a in t.lower()) for a in axes] + [0.1] for t in texts]
    vectors = np.asarray(rows, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_the_file_beside_the_database_and_its_bad_entries(tmp_path, caplog):
    (tmp_path / "claims.examples.yml").write_text(YAML)
    found = own_examples_of(_db(tmp_path))
    assert [e.question for e in found] == [
        "How many members live in Ohio?",
        "Which plans were retired?",
    ]
    assert found[1].evidence == "A retired plan has a retired_date."
    assert "has no question and sql" in caplog.text


def test_json_in_the_folder_and_unreadable_files(tmp_path, caplog):
    (tmp_path / "examples.json").write_text(json.dumps([{"question": "q", "sql": "SELECT 1"}]))
    assert own_examples_of(_db(tmp_path)) == (SolvedExample(question="q", sql="SELECT 1"),)
    (tmp_path / "claims.examples.yml").write_text("- [unclosed")
    # the first file is unreadable: the next one found is read
    assert own_examples_of(_db(tmp_path)) == (SolvedExample(question="q", sql="SELECT 1"),)
    assert "unreadable example file" in caplog.text
    assert own_examples_of(DatabaseRef(db_id="x", path=str(tmp_path / "none" / "x.sqlite"))) == ()


def test_search_ranks_the_file_and_the_extra_examples_by_question(tmp_path):
    (tmp_path / "claims.examples.yml").write_text(YAML)
    accepted = [SolvedExample(question="How many claims were paid?", sql="SELECT 2")]
    retriever = OwnExampleRetriever(extra=lambda db: accepted, embed=words)
    hits = retriever.search(_db(tmp_path), "Count the claims that were denied", k=2)
    assert [h.sql for h in hits][0] == "SELECT 2"
    assert all(h.db_id == "claims" for h in hits) and len(hits) == 2
    assert hits[0].score > hits[1].score
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    assert OwnExampleRetriever(embed=words).search(_db(empty), "anything") == []
    assert OwnExampleRetriever(embed=words).search(_db(tmp_path), "plans", k=0) == []


def test_a_named_file_is_read_and_a_server_database_has_only_a_named_one(tmp_path):
    (tmp_path / "claims.examples.yml").write_text(YAML)
    elsewhere = tmp_path / "team" / "claims-questions.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text("- question: q\n  sql: SELECT 1\n")
    named = _db(tmp_path).model_copy(update={"examples": str(elsewhere)})
    assert own_examples_of(named) == (SolvedExample(question="q", sql="SELECT 1"),)
    server = DatabaseRef(db_id="claims", path="postgresql://reader@db/claims", dialect="postgres")
    assert own_examples_of(server) == ()
    assert len(own_examples_of(server.model_copy(update={"examples": str(elsewhere)}))) == 1


def test_a_file_written_for_another_engine_is_shown_in_the_databases_dialect(tmp_path, caplog):
    examples = tmp_path / "claims.examples.yml"
    examples.write_text(
        "dialect: sqlite\n"
        "examples:\n"
        "- question: Claims per weekday?\n"
        "  sql: SELECT strftime('%w', paid_date), COUNT(*) FROM claims GROUP BY 1\n"
        "- question: Broken?\n"
        "  sql: SELECT FROM WHERE (\n"
    )
    server = DatabaseRef(
        db_id="claims",
        path="postgresql://reader@db/claims",
        dialect="postgres",
        examples=str(examples),
    )
    (shown,) = own_examples_of(server)
    assert shown.sql == (
        "SELECT CAST(CAST(EXTRACT(DOW FROM CAST(paid_date AS TIMESTAMP)) AS INT) AS TEXT), "
        "COUNT(*) FROM claims GROUP BY 1"
    )
    assert "entry 1 is not sqlite SQL" in caplog.text
    # on the engine it was written for, as written (the unreadable entry is not checked there)
    assert [e.sql for e in own_examples_of(_db(tmp_path))][0] == (
        "SELECT strftime('%w', paid_date), COUNT(*) FROM claims GROUP BY 1"
    )

    examples.write_text("dialect: oracle\nexamples: []\n")
    assert own_examples_of(server) == ()
    assert "dialect 'oracle' is not one of sqlite, duckdb, postgres" in caplog.text
