"""L1 task understanding: the extractor, then the cell and example retrievers in parallel; and
the schema focus used when a schema is too large for the prompt.

    question ──► KeywordSkeletonExtractor ──► Understanding(literals, skeleton, keywords)
              ──► CellRetriever(db, literal) per literal ║ ExampleRetriever(skeleton, exclude_db)
              ──► Context(understanding, cell_hits, example_hits, retrieval)

Failures degrade (empty Understanding, no hits) and are recorded as DecisionEvents; a database
that was never indexed is noted, not counted as a failure. ``Context.retrieval`` names the
retrievers that served (present, and neither ``*_unavailable`` nor ``*_failed``): it becomes
``Prediction.retrieval``.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import sys
from collections.abc import Awaitable, Callable

from pipelines.agents.base import is_fatal
from pipelines.agents.keyword_extractor import KeywordSkeletonExtractor
from pipelines.agents.runtime import Began
from pipelines.agents.types import Context, Understanding
from pipelines.contracts import CellHit, ExampleHit, SchemaView
from pipelines.schema import JoinGraph, join_graph, restrict, view_token_size
from pipelines.settings import UnderstandingSettings
from pipelines.task_run import TaskRun, describe, record_failure


class Understander:
    def __init__(
        self,
        *,
        extractor: KeywordSkeletonExtractor,
        settings: UnderstandingSettings,
        cell_retriever: object | None = None,
        example_retriever: object | None = None,
    ) -> None:
        self.extractor = extractor
        self.settings = settings
        self.cell_retriever = cell_retriever
        self.example_retriever = example_retriever

    async def understand(self, run: TaskRun) -> Context:
        task, u = run.task, Understanding()
        if self.settings.extractor_enabled:
            try:
                u = await self.extractor.extract(task.question, task.evidence, run.runtime)
            except Exception as exc:  # noqa: BLE001 - degradation 1
                if is_fatal(exc):
                    raise
                record_failure(run, "extractor", "l1", exc)
        cells, examples = await asyncio.gather(self._cells(run, u), self._examples(run, u))
        served = tuple(
            s for s, hits in (("cells", cells), ("examples", examples)) if hits is not None
        )
        return Context(
            understanding=u, cell_hits=cells or (), example_hits=examples or (), retrieval=served
        )

    # Each retriever: its hits, or None when it did not serve (absent, off, not indexed, failed).
    async def _cells(self, run: TaskRun, u: Understanding) -> tuple[CellHit, ...] | None:
        cfg = self.settings
        if self.cell_retriever is None or cfg.cell_k == 0:
            return None
        queries = u.literals or (run.task.question,)
        search = self.cell_retriever.search
        kwargs = _supported(search, k=cfg.cell_k, mode=cfg.cell_mode, threshold=cfg.cell_threshold)
        found = await self._retrieve(
            run,
            "l1.cell_retriever",
            lambda: asyncio.gather(
                *(_call(search, run.task.db.db_id, q, **kwargs) for q in queries)
            ),
        )
        if found is None:
            return None
        unique: dict[tuple[str, str, str], CellHit] = {}
        for hit in sorted((h for hits in found for h in hits), key=lambda h: -h.score):
            unique.setdefault((hit.table, hit.column, hit.value), hit)
        return tuple(unique.values())[: cfg.cell_k * len(queries)]

    async def _examples(self, run: TaskRun, u: Understanding) -> tuple[ExampleHit, ...] | None:
        cfg = self.settings
        if self.example_retriever is None or cfg.example_k == 0:
            return None
        search = self.example_retriever.search
        kwargs = _supported(
            search, k=cfg.example_k, exclude_db=run.task.db.db_id, threshold=cfg.example_threshold
        )
        found = await self._retrieve(
            run,
            "l1.example_retriever",
            lambda: _call(search, u.skeleton or run.task.question, **kwargs),
        )
        return None if found is None else tuple(found)

    async def _retrieve(
        self, run: TaskRun, name: str, search: Callable[[], Awaitable]
    ) -> object | None:
        began = Began.now()
        try:
            found = await search()
        except Exception as exc:  # noqa: BLE001 - degradation 2
            if _index_missing(exc):  # not a failure: this database was never indexed
                run.recorder.decide(f"{name.split('.')[-1]}_unavailable", "l1", error=describe(exc))
                return None
            run.runtime.record_tool(
                name, "contextual", began, ok=False, **{"error.type": describe(exc)}
            )
            run.recorder.decide(
                f"{name.split('.')[-1]}_failed", "l1", degradation=True, error=describe(exc)
            )
            return None
        hits = (
            sum(len(x) for x in found)
            if found and isinstance(found[0], (list, tuple))
            else len(found or ())
        )
        run.runtime.record_tool(
            name, "contextual", began, ok=True, **{"scale_analytics.hits": hits}
        )
        return found

    def focus(self, view: SchemaView, run: TaskRun) -> SchemaView:
        """The whole schema when it fits ``max_schema_tokens``; else the most relevant tables that fit.

        Tables are ranked by what points at them — named by the question, evidence or extracted
        keywords (name: 4, each named column: 1), holding a cell hit (3) — and taken best first,
        each with the tables on its shortest join path to those already kept, while the view fits.
        Nothing pointing anywhere keeps the whole schema.
        """
        budget = self.settings.max_schema_tokens
        if prompt_view_tokens(view) <= budget:
            return view
        words = {
            w.rstrip("s")
            for w in re.findall(
                r"[a-z0-9]+",
                " ".join(
                    (run.task.question, run.task.evidence, *run.context.understanding.keywords)
                ).lower(),
            )
        }
        hit_tables = {h.table.lower() for h in run.context.cell_hits}

        def mentioned(name: str) -> bool:
            return any(
                part.rstrip("s") in words for part in re.split(r"[^a-z0-9]+", name.lower()) if part
            )

        scores = {
            t.name: 4 * mentioned(t.name)
            + 3 * (t.name.lower() in hit_tables)
            + sum(mentioned(c.name) for c in t.columns)
            for t in view.tables
        }
        ranked = sorted(
            (name for name, score in scores.items() if score > 0), key=lambda n: -scores[n]
        )
        if not ranked:
            return view
        graph = join_graph(view)
        kept: list[str] = []
        focused, tokens = view, 0
        for name in ranked:
            if name in kept:
                continue
            group = kept + [t for t in (*_bridge(graph, kept, name), name) if t not in kept]
            candidate = restrict(view, tables=group)
            size = prompt_view_tokens(candidate)
            if not kept or size <= budget:  # the best-ranked table stays even when alone too large
                kept, focused, tokens = group, candidate, size
        run.recorder.decide(
            "schema.focused",
            "l1",
            tables=len(focused.tables),
            of_tables=len(view.tables),
            tokens=tokens,
            budget=budget,
        )
        return focused


def prompt_view_tokens(view: SchemaView) -> int:
    """Estimated tokens of the larger of the two renderings the agents see."""
    return max(view_token_size(view, "light"), view_token_size(view, "ddl"))


def _bridge(graph: JoinGraph, kept: list[str], table: str) -> tuple[str, ...]:
    """The tables between ``table`` and the nearest kept one on the join graph (none if adjacent)."""
    paths = [p for p in (graph.path(k, table) for k in kept) if p]
    if not paths:
        return ()
    inner = [t for fk in min(paths, key=len) for t in (fk.table, fk.ref_table)]
    return tuple(dict.fromkeys(t for t in inner if t != table and t not in kept))


def _index_missing(exc: BaseException) -> bool:
    # A retriever that raised IndexNotBuilt has imported its module; we need not (it loads lancedb).
    errors = sys.modules.get("pipelines.indexing.errors")
    return errors is not None and isinstance(exc, errors.IndexNotBuilt)


def _supported(fn: Callable, **kwargs: object) -> dict[str, object]:
    """The keyword arguments ``fn`` accepts (retrievers differ in their optional knobs)."""
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


async def _call(fn: Callable, *args: object, **kwargs: object):
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **kwargs)
    return await asyncio.to_thread(fn, *args, **kwargs)
