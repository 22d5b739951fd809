"""Entity selection over the catalog and the entities a coverage finding asks for
(pipelines/agentic_mode/entities.py)."""

from __future__ import annotations

import json

import pytest

from pipelines.agentic_mode.entities import EntitySelector, SelectionInput, entities_for
from pipelines.agentic_mode.taxonomy import load_taxonomy
from pipelines.agents.errors import AgentOutputError
from pipelines.schema.catalog.model import ColumnNode, Entity, SchemaGraph
from pipelines.settings import AgentCall


def entity(name: str, *columns: ColumnNode) -> Entity:
    return Entity(
        name=name, tables=(name,), description="", documented=False, rows=1, columns=columns
    )


def col(name: str, *children: ColumnNode) -> ColumnNode:
    return ColumnNode(path=name, name=name, type="text", children=children)


GRAPH = SchemaGraph(
    db_id="w",
    dialect="duckdb",
    entities=(
        entity("accounts", col("owned_by", col("owned_by.display_name"))),
        entity("users", col("user_id"), col("display_name")),
        entity("tickets", col("display_id"), col("stage")),
    ),
)
TAXONOMY = load_taxonomy()


def finding(cls: str, identifier: str, suggestion: str = ""):
    return TAXONOMY.finding(
        cls, source="duckdb", detail="", identifier=identifier, suggestion=suggestion
    )


def test_a_missing_column_finds_top_level_columns_before_sub_fields():
    assert entities_for(finding("column_not_found", "T1.display_name"), GRAPH) == (
        "users",
        "accounts",
    )


def test_a_misspelt_column_finds_the_entity_spelling_it_nearly_so():
    assert entities_for(finding("column_not_found", "displayid"), GRAPH) == ("tickets",)


def test_a_missing_table_is_its_entity_or_the_closest_name_and_engine_hints_are_ignored():
    assert entities_for(finding("table_not_found", "ticket", "pg_index"), GRAPH) == ("tickets",)
    assert entities_for(finding("table_not_found", "main.users"), GRAPH) == ("users",)
    assert entities_for(finding("table_not_found", "zzz"), GRAPH) == ()
    assert entities_for(finding("column_not_found", ""), GRAPH) == ()


SELECTION = SelectionInput(
    question="Who owns ticket TKT-1?", catalog="(catalog)", names=("users", "tickets"), limit=2
)


def test_the_reply_is_constrained_to_the_catalogs_names():
    request = EntitySelector(settings=AgentCall(max_tokens=64)).request(SELECTION)
    entities = request.json_schema["properties"]["entities"]
    assert entities["items"]["enum"] == ["users", "tickets"] and entities["maxItems"] == 2
    assert "(catalog)" in request.messages[0].content
    assert "Who owns ticket TKT-1?" in request.messages[-1].content


def test_the_parsed_selection_keeps_known_names_once_in_their_spelling():
    selector = EntitySelector(settings=AgentCall(max_tokens=64))
    reply = json.dumps({"entities": ["Tickets", "nope", "tickets", "users"]})
    assert selector.parse(reply, SELECTION) == ("tickets", "users")
    with pytest.raises(AgentOutputError):
        selector.parse("tickets, users", SELECTION)
