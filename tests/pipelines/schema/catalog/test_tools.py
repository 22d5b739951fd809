"""The two tools on real databases: the embedded enterprise DuckDB (nested, typed links, every
column documented with COMMENT ON), a Spider SQLite database, a partitioned SQLite file and a
small nested DuckDB file."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from core.config import load_config
from eval.enterprise import build_enterprise
from eval.enterprise.vocabulary import LINK_TYPES, SEVERITIES, labels
from pipelines.contracts import DatabaseRef
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema import introspect, join_graph, view_token_size
from pipelines.schema.catalog import (
    UnknownEntity,
    catalog,
    entity_schema,
    schema_graph,
)
from pipelines.schema.catalog.build import build_graph
from pipelines.schema.errors import UnknownSchemaObject
from pipelines.settings import CatalogSettings

SPIDER = Path(load_config().paths.benchmarks) / "spider"
needs_spider = pytest.mark.skipif(
    not (SPIDER / "database" / "world_1" / "world_1.sqlite").is_file(),
    reason=f"shared Spider data not found at {SPIDER} (see ../shared/benchmarks/README.md)",
)


@pytest.fixture(scope="module")
def workitems(tmp_path_factory: pytest.TempPathFactory) -> DatabaseRef:
    """The enterprise database at 5% of its rows (the same schema, documentation and vocabularies)."""
    paths = build_enterprise(tmp_path_factory.mktemp("enterprise"), scale=0.05)
    return DatabaseRef(db_id="workitems", path=str(paths.database), dialect="duckdb")


def _field(entity, path: str):
    return next(f for f in entity.fields() if f.path == path)


def test_the_catalog_lists_every_entity_with_documentation_rows_and_scored_columns(workitems):
    found = catalog(workitems)
    by_name = {e.name: e for e in found.entities}
    assert set(by_name) == {
        "users",
        "parts",
        "accounts",
        "rev_orgs",
        "sla_policies",
        "enhancements",
        "issues",
        "tickets",
        "conversations",
    }
    tickets = by_name["tickets"]
    assert tickets.description == "Customer support tickets" and tickets.documented
    assert tickets.rows == 1000
    shown = [c.path for c in tickets.columns]
    assert len(shown) == CatalogSettings().top_columns and tickets.hidden == 18 - len(shown)
    assert shown[0] == "display_id"  # the key first
    assert {"links", "owned_by", "severity", "stage", "created_at"} <= set(shown)
    assert "title" not in shown  # free text ranks last
    assert tickets.targets["links"] == ("enhancements", "issues", "tickets", "conversations")
    assert {"rev_orgs", "parts", "users", "issues"} <= set(tickets.joins)
    text = found.text()
    assert "tickets (1k rows): Customer support tickets" in text
    assert "severity {blocker, high, medium, low}" in text
    assert "links list<struct<type, target_type, display_id, linked_at>> -> " in text
    # The point of the catalog: a fraction of the whole schema's prompt.
    assert found.tokens < view_token_size(introspect(workitems, 3)) / 3


def test_entity_schema_gives_vocabularies_sub_fields_and_typed_join_keys(workitems):
    (tickets,) = entity_schema(workitems, ["Tickets"]).entities
    severity = _field(tickets, "severity")
    assert severity.vocabulary.source == "documented"
    assert severity.vocabulary.values == labels(SEVERITIES)  # in the documentation's order
    link_type = _field(tickets, "links[].type")
    assert link_type.type == "text"
    assert link_type.description.startswith("type is the relation from this item to the target")
    assert link_type.vocabulary.source == "documented"
    assert "is_resolved_by" in link_type.vocabulary.values
    assert set(link_type.vocabulary.values) <= set(labels(LINK_TYPES))
    breached = _field(tickets, "sla_tracker.policy.targets.first_response.breached")
    assert breached.type == "boolean" and set(breached.samples) == {"True", "False"}
    assert _field(tickets, "sla_tracker.policy.name").description.startswith("policy.name names")
    assert _field(tickets, "links").type == "list<struct<type, target_type, display_id, linked_at>>"
    text = entity_schema(workitems, ["tickets"]).text()
    assert "  - links[].type text: type is the relation" in text
    assert "    values: is_resolved_by, " in text
    assert "- links[].display_id = issues.display_id when links[].target_type = 'issue'" in text
    assert "- owned_by[].user_id = users.user_id (inferred)" in text
    assert "- rev_org_id = rev_orgs.rev_org_id\n" in text  # declared: not marked inferred
    assert (
        "- display_id = issues.links[].display_id when issues.links[].target_type = 'ticket'"
        in text
    )


def test_join_keys_the_values_contradict_are_dropped(workitems):
    # joins.py infers tickets.display_id -> issues.display_id (two sole keys of one name); no
    # ticket key is an issue key, so the catalog keeps no such join.
    inferred = {
        (e.table, e.column, e.ref_table) for e in join_graph(introspect(workitems, 0)).edges
    }
    assert ("tickets", "display_id", "issues") in inferred
    kept = {(j.entity, j.column, j.ref_entity) for j in schema_graph(workitems).joins}
    assert ("tickets", "display_id", "issues") not in kept
    assert ("tickets", "links[].display_id", "issues") in kept


def test_an_unknown_entity_is_a_typed_error_with_close_names(workitems):
    with pytest.raises(UnknownEntity) as raised:
        entity_schema(workitems, ["tickets", "tiket", "zzz"])
    assert isinstance(raised.value, UnknownSchemaObject)
    assert raised.value.suggestions == {"tiket": ("tickets",), "zzz": ()}
    assert "'tiket': did you mean tickets?" in str(raised.value)


def test_one_name_may_come_as_a_string(workitems):
    assert [e.name for e in entity_schema(workitems, "rev_orgs").entities] == ["rev_orgs"]


def test_a_missing_database_is_unavailable(tmp_path):
    with pytest.raises(DatabaseUnavailable):
        catalog(DatabaseRef(db_id="gone", path=str(tmp_path / "gone.duckdb"), dialect="duckdb"))
    assert not (tmp_path / "gone.duckdb").exists()


def _file_state(path: Path) -> tuple[str, int, list[str]]:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


def test_building_never_writes_the_database(workitems, tmp_path):
    database = Path(shutil.copy(workitems.path, tmp_path / "workitems.duckdb"))
    copy = workitems.model_copy(update={"path": str(database)})
    before = _file_state(database)
    build_graph(copy, CatalogSettings())
    assert _file_state(database) == before


def test_the_graph_is_built_once_and_again_when_its_documentation_changes(workitems, tmp_path):
    database = Path(shutil.copy(workitems.path, tmp_path / "workitems.duckdb"))
    copy = workitems.model_copy(update={"path": str(database)})
    first = schema_graph(copy)
    assert schema_graph(copy) is first
    documentation = {"tables": {"tickets": {"columns": {"title": "What the customer wrote first"}}}}
    (tmp_path / "workitems.yml").write_text(yaml.safe_dump(documentation), encoding="utf-8")
    (tickets,) = entity_schema(copy, ["tickets"]).entities
    assert schema_graph(copy) is not first
    assert _field(tickets, "title").description == "What the customer wrote first"


PARTITIONED = """
CREATE TABLE users (user_id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE events_2023 (event_id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(user_id), kind TEXT);
CREATE TABLE events_2024 (event_id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(user_id), kind TEXT);
CREATE TABLE events_2025 (event_id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(user_id), kind TEXT);
CREATE TABLE t1 (a INTEGER);
CREATE TABLE t2 (b INTEGER);
INSERT INTO users VALUES (1, 'ada'), (2, 'bob');
INSERT INTO events_2023 VALUES (1, 1, 'login'), (2, 1, 'login'), (3, 2, 'logout'), (4, 2, 'login');
INSERT INTO events_2024 VALUES (5, 1, 'login'), (6, 2, 'login');
INSERT INTO events_2025 VALUES (7, 1, 'login'), (8, 2, 'logout'), (9, 1, 'logout'), (10, 2, 'login');
"""


@pytest.fixture
def partitioned(tmp_path: Path) -> DatabaseRef:
    path = tmp_path / "events.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(PARTITIONED)
    conn.close()
    return DatabaseRef(db_id="events", path=str(path))


def test_partition_tables_are_one_entity(partitioned):
    found = catalog(partitioned)
    assert [e.name for e in found.entities] == ["users", "events", "t1", "t2"]
    events = found.entities[1]
    assert events.tables == ("events_2023", "events_2024", "events_2025")
    assert events.rows == 10
    assert "events (10 rows in 3 tables events_2023 .. events_2025)" in found.text()
    (by_partition,) = entity_schema(partitioned, ["events_2024"]).entities
    assert by_partition.name == "events"
    joins = [j.text("events") for j in schema_graph(partitioned).joins_of("events")]
    assert joins == ["user_id = users.user_id"]  # one join for the three declared keys
    assert _field(by_partition, "kind").vocabulary.values == ("login", "logout")


def test_nested_duckdb_paths_enter_lists_with_brackets_and_structs_with_dots(tickets_db):
    (tickets,) = entity_schema(tickets_db, ["tickets"]).entities
    paths = {f.path: f.type for f in tickets.fields()}
    assert paths["meta"] == "struct<stage, score, origin>"
    assert paths["meta.origin.region"] == "text"
    assert paths["links"] == "list<struct<type, display_id>>"
    assert paths["links[].type"] == "text"
    assert paths["labels"] == "list<text>"
    assert _field(tickets, "title").description == "one-line summary"


@needs_spider
def test_a_spider_database_gets_observed_vocabularies_and_its_declared_keys():
    db = DatabaseRef(
        db_id="world_1",
        path=str(SPIDER / "database" / "world_1" / "world_1.sqlite"),
        tables_json=str(SPIDER / "tables.json"),
    )
    found = catalog(db)
    assert [e.name for e in found.entities] == ["city", "country", "countrylanguage"]
    assert "IsOfficial {F, T}" in found.text()
    assert "CountryCode text key -> country" in found.text()
    (languages,) = entity_schema(db, ["countrylanguage"]).entities
    assert _field(languages, "IsOfficial").vocabulary.source == "observed"
    assert _field(languages, "CountryCode").vocabulary is None  # a key: its values are references
    text = entity_schema(db, ["countrylanguage"]).text()
    assert "- CountryCode = country.Code\n" in text or text.endswith("- CountryCode = country.Code")
