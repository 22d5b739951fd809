"""Schema focus: the reference prompt cut to the tables a question needs, when the whole schema
is too large to show well.

    ReferenceSchema (per table) ─┐   prepare(db, reference): once per database — the view with
    SchemaView + documentation ──┤     its documentation and samples, the join graph, each
    embed (optional) ────────────┘     table's prompt size, the documented columns' embeddings
    question, evidence, cell hits ──► focus(db, ...) ──► link_schema ──► FocusedSchema(text, tables)

Below ``FocusSettings.above_tokens`` (estimated tokens of the whole reference prompt) the whole
schema is the answer, untouched: small schemas are better shown whole. Above it the linker keeps
the tables the question points at, every table on a shortest join path between them, and the
next-best tables while the prompt stays within ``budget_ratio`` of the whole.

    focuser = SchemaFocuser(FocusSettings(above_tokens=2000), embed=embed)
    await focuser.prepare(db, reference)
    focused = focuser.focus(db, "How many claims were denied in 2024?", cell_hits=hits)
    focused.tables, focused.tokens, focused.whole_tokens   ──► (('claims',), 1058, 5493)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from core.types import Frozen
from pipelines.contracts import CellHit, DatabaseRef, SchemaView
from pipelines.indexing.embedder import embed as embed_texts
from pipelines.schema.introspect import introspect
from pipelines.schema.joins import JoinGraph, join_graph
from pipelines.schema.linking import link_schema
from pipelines.schema.reference import ReferenceSchema
from pipelines.settings import FocusSettings

Embed = Callable[[Sequence[str]], Any]  # texts -> (n, d) L2-normalised vectors
log = logging.getLogger(__name__)


class FocusedSchema(Frozen):
    """The schema prompt one question's generators see."""

    text: str
    tables: tuple[str, ...]  # shown, in prompt order
    focused: bool  # False: the whole schema (small enough, or nothing pointed anywhere)
    tokens: int  # estimated tokens of ``text``
    whole_tokens: int  # of the whole reference prompt
    bridges: tuple[str, ...] = ()  # shown only to join shown tables
    # ``tables`` from the most wanted to the least, where the linker ranked them (empty for a
    # schema shown whole unranked): a prompt too long for the model gives up the last first
    ranked: tuple[str, ...] = ()


class _Database:
    """What the focus reads of one database once."""

    def __init__(
        self, view: SchemaView, graph: JoinGraph, embed: Embed | None, sizes: dict[str, int]
    ) -> None:
        self.view = view
        self.graph = graph
        self.hub_rank = hub_rank(view, graph, sizes)
        self.owners: list[str] = []
        texts: list[str] = []
        for table in view.tables:
            texts.append(f"{table.name.replace('_', ' ')}: {table.description or ''}")
            self.owners.append(table.name)
            for column in table.columns:
                words = column.name.replace("_", " ")
                texts.append(f"{table.name.replace('_', ' ')} {words}: {column.description or ''}")
                self.owners.append(table.name)
        self.vectors = np.asarray(embed(texts)) if embed is not None else None

    def similarity(self, embed: Embed | None, text: str) -> dict[str, float] | None:
        if embed is None or self.vectors is None or not len(self.vectors):
            return None
        scores = self.vectors @ np.asarray(embed([text]))[0]
        best: dict[str, float] = {}
        for owner, score in zip(self.owners, scores):
            best[owner] = max(best.get(owner, -1.0), float(score))
        return best


class SchemaFocuser:
    """Per database, once: ``prepare``; per question: ``focus`` (no model call, no I/O)."""

    def __init__(self, settings: FocusSettings, embed: Embed | None = embed_texts) -> None:
        self.settings = settings
        self.embed = embed if settings.similarity else None
        self._databases: dict[tuple[str, str], _Database] = {}

    def wanted(self, reference: ReferenceSchema) -> bool:
        """Whether a schema this size is focused at all."""
        above = self.settings.above_tokens
        return above is not None and reference.tokens > above

    async def prepare(self, db: DatabaseRef, reference: ReferenceSchema) -> None:
        """Read what the focus needs of ``db`` (a no-op for a schema shown whole)."""
        key = (db.dialect, db.path)
        if key in self._databases or not self.wanted(reference):
            return
        view = await asyncio.to_thread(introspect, db, self.settings.sample_values)
        graph = join_graph(view)
        try:
            found = await asyncio.to_thread(_Database, view, graph, self.embed, reference.sizes)
        except Exception as exc:  # noqa: BLE001 - similarity is optional: link without it
            log.warning("schema focus of %s without similarity: %s", db.db_id, exc)
            self.embed = None
            found = await asyncio.to_thread(_Database, view, graph, None, reference.sizes)
        self._databases[key] = found

    def focus(
        self,
        db: DatabaseRef,
        reference: ReferenceSchema,
        question: str,
        evidence: str = "",
        cell_hits: Iterable[CellHit] = (),
    ) -> FocusedSchema:
        """The schema text for one question: focused where ``prepare`` found it worth it."""
        found = self._databases.get((db.dialect, db.path))
        if found is None:
            text = reference.text()
            tables = tuple(b.name for b in reference.tables)
            return FocusedSchema(
                text=text,
                tables=tables,
                focused=False,
                tokens=reference.tokens,
                whole_tokens=reference.tokens,
            )
        s = self.settings
        linked = link_schema(
            found.view,
            question,
            evidence,
            cell_hits,
            min_gain=s.min_gain,
            max_tables=s.max_tables,
            similarity=found.similarity(self.embed, f"{question} {evidence}".strip()),
            sizes=reference.sizes,
            budget=int(s.budget_ratio * reference.tokens),
            graph=found.graph,
        )
        tables = linked.tables
        if s.order == "hubs_first":
            tables = tuple(sorted(tables, key=lambda t: found.hub_rank.get(t, len(found.hub_rank))))
        return FocusedSchema(
            text=reference.text(tables),
            tables=tables,
            focused=not linked.whole,
            tokens=sum(reference.sizes.get(t, 0) for t in linked.tables),
            whole_tokens=reference.tokens,
            bridges=linked.bridges,
            ranked=linked.ranked,
        )


def hub_rank(view: SchemaView, graph: JoinGraph, sizes: dict[str, int]) -> dict[str, int]:
    """Each table's place in the hubs-first order: more distinct tables joined to it first,
    then the larger prompt block, then catalog order.

    >>> from pipelines.contracts import ColumnInfo, ForeignKey, TableInfo
    >>> t = lambda n: TableInfo(name=n, columns=(ColumnInfo(name="id", type="INT"),))
    >>> view = SchemaView(db_id="d", dialect="sqlite", tables=(t("a"), t("b"), t("c")))
    >>> edges = (ForeignKey(table="a", column="id", ref_table="b", ref_column="id"),
    ...          ForeignKey(table="c", column="id", ref_table="b", ref_column="id"))
    >>> hub_rank(view, JoinGraph(edges=edges), {"a": 10, "b": 5, "c": 20})
    {'b': 0, 'c': 1, 'a': 2}
    """
    neighbours: dict[str, set[str]] = {t.name: set() for t in view.tables}
    for edge in graph.edges:
        if edge.table != edge.ref_table:
            neighbours.setdefault(edge.table, set()).add(edge.ref_table)
            neighbours.setdefault(edge.ref_table, set()).add(edge.table)
    catalog = [t.name for t in view.tables]
    ranked = sorted(
        catalog, key=lambda t: (-len(neighbours.get(t, ())), -sizes.get(t, 0), catalog.index(t))
    )
    return {t: i for i, t in enumerate(ranked)}


def record_focus(run: Any, focused: FocusedSchema) -> None:
    """A ``schema.focused`` decision in the run's trace: what the generators were shown."""
    run.recorder.decide(
        "schema.focused",
        "l0",
        tables=",".join(focused.tables),
        bridges=",".join(focused.bridges),
        tokens=focused.tokens,
        whole_tokens=focused.whole_tokens,
    )
