"""L0 retrieval without an LLM call (the adaptive pipeline's; the agentic mode's cell values):
the question's n-grams stand in for the extractor's literals, its skeleton for the extractor's.

    question + evidence ──► n-grams ──► cell retriever (db)             ──► Context.cell_hits
    question ──► own example retriever (the database's own solved examples) ──┐
    question ──► skeleton (schema words) ──► example retriever (other dbs,     ├► Context.example_hits
                 only within example_threshold, filling the places left) ─────┘

Either retriever may be absent, not built for the database or failing: the question goes on
without its hits, with a DecisionEvent (``*_unavailable``, or ``*_failed`` as a degradation).
"""

from __future__ import annotations

from collections.abc import Callable

from pipelines.agents.runtime import Began
from pipelines.agents.types import Context
from pipelines.contracts import CellHit, ExampleHit, RetrievalSource
from pipelines.indexing.cell_values.ngrams import question_ngrams
from pipelines.indexing.examples.own_examples import OwnExampleRetriever
from pipelines.indexing.examples.question_skeleton import SchemaWords, skeletonise
from pipelines.settings import UnderstandingSettings
from pipelines.task_run import TaskRun, describe
from pipelines.understanding import _call, _index_missing, _supported


async def retrieve(
    run: TaskRun,
    words: SchemaWords,
    settings: UnderstandingSettings,
    *,
    cell_retriever: object | None,
    example_retriever: object | None,
    own_examples: OwnExampleRetriever | None = None,
) -> tuple[Context, tuple[RetrievalSource, ...]]:
    """The cell values and solved examples for ``run``'s question, and which retrievers served.
    The database's own examples come first; examples from other databases fill the prompt's
    remaining ``examples_in_prompt`` places."""
    task = run.task
    cells: tuple[CellHit, ...] = ()
    examples: tuple[ExampleHit, ...] = ()
    used: list[RetrievalSource] = []
    if cell_retriever is not None and settings.cell_k > 0:
        # The question's n-grams stand in for the LLM extractor's literals (no call spent).
        phrases = question_ngrams(f"{task.question} {task.evidence}".strip())
        many = getattr(cell_retriever, "search_many", None)
        search, query = (
            (many, phrases) if many is not None else (cell_retriever.search, task.question)
        )
        found = await lookup(
            run,
            "cell_retriever",
            search,
            task.db.db_id,
            query,
            **_supported(
                search,
                k=settings.cell_k,
                mode=settings.cell_mode,
                threshold=settings.cell_threshold,
            ),
        )
        if found is not None:
            cells = tuple(found)
            used.append("cells")
    limit = settings.examples_in_prompt
    if own_examples is not None and settings.own_example_k > 0 and limit > 0:
        found = await lookup(
            run,
            "own_examples",
            own_examples.search,
            task.db,
            task.question,
            k=min(settings.own_example_k, limit),
        )
        if found:
            examples = tuple(found)
            used.append("examples")
    if example_retriever is not None and settings.example_k > 0 and limit > len(examples):
        search = example_retriever.search
        found = await lookup(
            run,
            "example_retriever",
            search,
            skeletonise(task.question, words),
            **_supported(
                search,
                k=min(settings.example_k, limit - len(examples)),
                exclude_db=task.db.db_id,
                threshold=settings.example_threshold,
            ),
        )
        if found is not None:
            examples += tuple(found)
            used.append("examples")
    used = list(dict.fromkeys(used))
    return Context(cell_hits=cells, example_hits=examples), tuple(used)


async def lookup(
    run: TaskRun, name: str, search: Callable, *args: object, **kwargs: object
) -> list | None:
    """``search(*args, **kwargs)`` as a list, recorded as the tool ``l0.<name>``; ``None`` when
    it raises (recorded as a decision)."""
    began = Began.now()
    try:
        found = list(await _call(search, *args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - retrieval is optional; the question goes on without it
        label = "unavailable" if _index_missing(exc) else "failed"
        run.recorder.decide(
            f"{name}_{label}", "l0", degradation=label == "failed", error=describe(exc)
        )
        return None
    run.runtime.record_tool(
        f"l0.{name}", "contextual", began, ok=True, **{"scale_analytics.hits": len(found)}
    )
    return found
