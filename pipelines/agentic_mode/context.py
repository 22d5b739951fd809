"""What the agentic mode reads of a database once (``DatabaseContext``): its knowledge graph,
the catalog's text, the checker chain over the whole schema, and the order its entities are
shown in (``hubs_first``).
"""

from __future__ import annotations

from typing import NamedTuple

from pipelines.agentic_mode.chain import CheckerChain
from pipelines.schema.catalog.model import SchemaGraph


class DatabaseContext(NamedTuple):
    """What the orchestrator reads of a database once: its knowledge graph, the catalog's text,
    the checker chain over the whole schema (a name the generator was not shown but the
    database has is a coverage gap, not an unknown name), and the order entities are shown in."""

    graph: SchemaGraph
    catalog: str
    chain: CheckerChain
    order: tuple[str, ...]


def hubs_first(graph: SchemaGraph) -> tuple[str, ...]:
    """Entity names, those joined to the most others first (then the larger first): the
    entities most questions need open every prompt, so prompts of different questions share
    their longest prefix and the model server's KV cache serves it."""
    partners: dict[str, set[str]] = {e.name: set() for e in graph.entities}
    for join in graph.joins:
        if join.entity != join.ref_entity:
            partners[join.entity].add(join.ref_entity)
            partners[join.ref_entity].add(join.entity)
    ranked = sorted(graph.entities, key=lambda e: (-len(partners[e.name]), -(e.rows or 0)))
    return tuple(e.name for e in ranked)
