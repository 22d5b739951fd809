"""Which entities the generator is shown: the orchestrator's first choice from the catalog, and
what a schema-coverage finding asks to add.

    catalog text + question ──► EntitySelector (one short call; the reply is constrained to a
                                JSON list of the catalog's entity names) ──► ("tickets", "issues")
    Finding(table_not_found "ticket") ──► entities_for(finding, graph) ──► ("tickets",)

    >>> from pipelines.agentic_mode.taxonomy import load_taxonomy
    >>> from pipelines.schema.catalog.model import ColumnNode, Entity, SchemaGraph
    >>> graph = SchemaGraph(db_id="w", dialect="duckdb", entities=(
    ...     Entity(name="tickets", tables=("tickets",), description="", documented=False, rows=3,
    ...            columns=(ColumnNode(path="severity", name="severity", type="text"),)),
    ...     Entity(name="issues", tables=("issues",), description="", documented=False, rows=3,
    ...            columns=(ColumnNode(path="priority", name="priority", type="text"),))))
    >>> taxonomy = load_taxonomy()
    >>> entities_for(taxonomy.finding("table_not_found", source="duckdb", detail="",
    ...     identifier="ticket"), graph)
    ('tickets',)
    >>> entities_for(taxonomy.finding("column_not_found", source="duckdb", detail="",
    ...     identifier="i.priority"), graph)
    ('issues',)
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import Field

from core.types import Frozen
from models.types import ChatRequest
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.agents.base import PromptAgent, parse_json
from pipelines.agents.render import render_evidence
from pipelines.schema.catalog.model import SchemaGraph, UnknownEntity


class SelectionInput(Frozen):
    question: str
    evidence: str = ""
    catalog: str  # Catalog.text()
    names: tuple[str, ...] = Field(min_length=1)  # the catalog's entity names
    limit: int = Field(default=3, ge=1)


class _Selection(Frozen):
    entities: tuple[str, ...]


class EntitySelector(PromptAgent[SelectionInput, tuple[str, ...]]):
    """The entities a question needs, chosen by the model from the catalog (role ``generator``:
    the orchestrator's decisions belong to the strong model)."""

    agent_name = "agentic.select_entities"
    role = "generator"
    prompt_name = "entity_selector"

    def values(self, inp: SelectionInput) -> dict[str, object]:
        return {
            "catalog": inp.catalog,
            "question": inp.question.strip(),
            "evidence": render_evidence(inp.evidence),
            "limit": inp.limit,
        }

    def request(self, inp: SelectionInput) -> ChatRequest:
        # The names differ per database, so the reply's schema is built per call.
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "entities": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(inp.names)},
                    "minItems": 1,
                    "maxItems": inp.limit,
                }
            },
            "required": ["entities"],
            "additionalProperties": False,
        }
        return super().request(inp).model_copy(update={"json_schema": schema})

    def parse(self, text: str, inp: SelectionInput) -> tuple[str, ...]:
        chosen = parse_json(text, _Selection, "entity selection").entities
        known = {n.lower(): n for n in inp.names}
        picked = [known[n.lower()] for n in chosen if n.lower() in known]
        return tuple(dict.fromkeys(picked))[: inp.limit]


def entities_for(finding: Finding, graph: SchemaGraph) -> tuple[str, ...]:
    """The entities that may hold what a schema-coverage finding says is missing: the entity a
    missing table's name is (or is closest to); for a missing column, the entities with a
    column of that name, then those with a sub-field of it, then those with a column spelled
    nearly so; () when nothing in the database fits. The engine's own suggestions are not
    searched: they name what is already in scope (or, for a table, a system catalog)."""
    name = finding.identifier.strip().strip("'\"`")
    if not name:
        return ()
    if finding.error_class == "table_not_found":
        table = name.split(".")[-1]
        try:
            return tuple(e.name for e in graph.find([table]))
        except (
            UnknownEntity
        ):  # an entity the finding names (a nested column's owner), or the closest
            named = [e.name for e in graph.entities if e.name == finding.suggestion.strip()]
            return tuple(named) or graph.suggest(table)[:1]
    column = name.split(".")[-1].lower()
    top = [e.name for e in graph.entities if any(c.name.lower() == column for c in e.columns)]
    nested = [
        e.name
        for e in graph.entities
        if any(c.name.split(".")[-1].lower() == column for c in e.fields())
    ]
    close = [
        e.name
        for e in graph.entities
        if any(
            difflib.SequenceMatcher(None, c.name.lower(), column).ratio() >= 0.85 for c in e.columns
        )
    ]
    return tuple(dict.fromkeys(top + nested + close))
