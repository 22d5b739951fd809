"""The pipeline side of the endpoint: one question in, one explained answer out.

    QueryJob ──► build_pipeline(profile's config, client, sandbox)   (as ``scale-analytics ask``)
                 + own examples: the files beside the database and the answers its askers
                   accepted (``StateStore.accepted_examples``, by the registered name)
             ──► Prediction + ReasoningTrace ──► rows cut to max_rows, confidence
             ──► ResponseAgent: explanation and assumptions
             ──► trace stored (``GET /v1/traces/{id}``) ──► EngineAnswer

The engine runs inside the pipeline deployment (``serve/app.py``); the model servers and the
sandbox actors it uses are shared Ray actors started by ``scale-analytics serve``. It never
raises for a question it cannot answer: the failure comes back as an ``ErrorBody``.

Stage progress (``stream``) comes from the model calls themselves: a wrapper around the client
maps each call's role to a stage (extractor: understanding; generator: candidates; fixer and
critic: refinement; selector: selection), for the request in whose context the call runs.

Confidence: with ``n`` executed candidates, ``c`` of them in the chosen answer's result bucket
and ``s`` in the largest other bucket, ``agreement = c/n`` and ``margin = (c - s)/n``; the
confidence is ``n/(n+1) · (agreement + margin)/2`` — one candidate alone gives 0.5.

    >>> confidence_of(chosen="a", hashes=["a", "a", "a", "b"])
    0.5
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from core.types import Frozen
from pipelines.contracts import ExecutionResult, Prediction, Task
from pipelines.pipeline import Pipeline
from serve.explain import Answered, ResponseAgent, template_explanation
from serve.settings import ServeSettings
from serve.store import StateStore
from serve.types import EngineAnswer, JsonScalar, Progress, QueryAnswer, QueryJob, QueryUsage

log = logging.getLogger(__name__)

_STAGE_OF_ROLE = {
    "extractor": "understanding",
    "generator": "candidates",
    "fixer": "refinement",
    "critic": "refinement",
    "selector": "selection",
}


class ErrorBody(Frozen):
    status: int
    code: str
    message: str


class EngineResult(Frozen):
    answer: EngineAnswer | None = None
    error: ErrorBody | None = None


def confidence_of(chosen: str | None, hashes: list[str]) -> float:
    """From the result hashes of the executed candidates (see the module docstring)."""
    if not hashes or chosen is None:
        return 0.0
    counts = Counter(hashes)
    n, c = len(hashes), counts.get(chosen, 0)
    s = max((v for h, v in counts.items() if h != chosen), default=0)
    return round(n / (n + 1) * ((c / n) + (c - s) / n) / 2, 3)


# --- progress -------------------------------------------------------------------------------


class _Tracker:
    def __init__(self, emit: Callable[[Progress], None], expected: int) -> None:
        self.emit, self.expected = emit, expected
        self.calls = self.candidates = 0

    def send(self, stage: str) -> None:
        self.emit(
            Progress(
                stage=stage,  # type: ignore[arg-type]
                llm_calls=self.calls,
                candidates=self.candidates,
                expected=max(self.expected, self.candidates),
            )
        )


_tracker: contextvars.ContextVar[_Tracker | None] = contextvars.ContextVar(
    "serve_progress", default=None
)


class ProgressClient:
    """A model client that reports each call's stage to the current request's tracker."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def chat(self, request, *, role: str, budget=None):
        tracker = _tracker.get()
        stage = _STAGE_OF_ROLE.get(role, "refinement")
        if tracker is not None and stage != "candidates":
            tracker.send(stage)
        response = await self.inner.chat(request, role=role, budget=budget)
        if tracker is not None:
            tracker.calls += 1
            if stage == "candidates":
                tracker.candidates += len(response.texts)
                tracker.send(stage)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


# --- the engine -----------------------------------------------------------------------------


def _scalar(value: object) -> JsonScalar:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


class QueryEngine:
    """Answers ``QueryJob``s with the configured pipelines, one per profile (built on first use).

    ``cfgs``: profile -> the composed config (a plain dict); ``sandbox``: a sandbox or pool.
    """

    def __init__(
        self,
        cfgs: Mapping[str, dict],
        settings: ServeSettings,
        sandbox: Any,
        *,
        client: Any | None = None,
    ) -> None:
        import models

        self.cfgs = {p: OmegaConf.create(c) for p, c in cfgs.items()}
        self.settings = settings
        self.sandbox = sandbox
        default = self.cfgs[settings.default_profile]
        self.client = client if client is not None else models.build_client(default.model)
        self._progress_client = ProgressClient(self.client)
        self._pipelines: dict[str, Pipeline] = {}
        self._retrievers: tuple[Any, Any] | None = None
        self.store = StateStore(settings.state_dir)
        self._own_examples: Any | None = None
        self.explainer = ResponseAgent(
            self.client,
            role=settings.explain.role,
            max_tokens=settings.explain.max_tokens,
            rows_shown=settings.explain.rows_shown,
        )
        self.index_status: dict[str, str] = {}

    def _pipeline(self, profile: str) -> Pipeline:
        if profile not in self._pipelines:
            from pipelines.factory import build_pipeline, build_retrievers

            if self._retrievers is None:
                self._retrievers = build_retrievers(self.cfgs[self.settings.default_profile])
            cells, examples = self._retrievers
            self._pipelines[profile] = build_pipeline(
                self.cfgs[profile],
                client=self._progress_client,
                sandbox=self.sandbox,
                cell_retriever=cells,
                example_retriever=examples,
                sinks=(),
                own_examples=self.own_examples(),
            )
        return self._pipelines[profile]

    def own_examples(self) -> Any:
        """The asking database's solved examples: its example file and its accepted answers.

        In the endpoint a ``DatabaseRef``'s ``db_id`` is the registered name
        (``serve.databases.database_ref``), which is what the query log records.
        """
        if self._own_examples is None:
            from pipelines.indexing.examples.own_examples import OwnExampleRetriever

            store = self.store
            self._own_examples = OwnExampleRetriever(
                extra=lambda db: store.accepted_examples(db.db_id)
            )
        return self._own_examples

    def prepare(self, db: Any, name: str) -> str:
        """Build the L0 indexes ``db`` needs (when missing or stale): the retrieval line."""
        from pipelines.indexing.builder.ensure import ensure_indexes

        status = ensure_indexes(self.cfgs[self.settings.default_profile], [db])
        self.index_status[name] = status.summary()
        self._retrievers = None  # a retriever opened before the build would not see it
        self._pipelines.clear()
        return self.index_status[name]

    async def answer(
        self, job: QueryJob, on_progress: Callable[[Progress], None] | None = None
    ) -> EngineResult:
        started = time.monotonic()
        if job.profile not in self.cfgs:
            return _error(422, "unknown_profile", f"profile {job.profile!r} is not configured")
        from pipelines.strategies.registry import scaling_settings

        scaling = scaling_settings(self.cfgs[job.profile])
        tracker = _Tracker(on_progress, scaling.first_wave) if on_progress else None
        token = _tracker.set(tracker)
        if tracker is not None:
            tracker.send("understanding")  # schema, retrieval and the extractor, if any
        try:
            task = Task(
                task_id=job.trace_id, question=job.question, db=job.db, evidence=job.evidence
            )
            try:
                async with asyncio.timeout(job.deadline_s):
                    prediction, trace = await self._pipeline(job.profile).answer_with_trace(task)
            except TimeoutError:
                return _error(504, "deadline_exceeded", f"no answer within {job.deadline_s:g} s")
            except Exception:  # a bug of the pipeline: logged here, a plain 500 for the caller
                log.exception("pipeline failed on %s", job.trace_id)
                return _error(500, "pipeline_failed", "the pipeline failed on this question")
            self._store_trace(job, trace.model_dump_json())
            result = prediction.exec_result
            if prediction.error or not prediction.sql:
                reasons = ", ".join(prediction.degradation_reasons) or "no candidate"
                return _error(422, "no_answer", f"no SQL could be produced ({reasons})")
            if result is None or not result.ok:
                kind = result.error_kind if result is not None else "not_run"
                return _error(
                    422,
                    "sql_failed",
                    f"the chosen SQL did not run in the read-only sandbox ({kind})",
                )
            if tracker is not None:
                tracker.send("explanation")
            if self.settings.explain.enabled:
                explanation = await self.explainer.explain(
                    Answered(
                        question=job.question,
                        sql=prediction.sql,
                        result=result,
                        evidence=job.evidence,
                        dialect=job.db.dialect,
                    )
                )
                text, assumptions, extra = (
                    explanation.text,
                    explanation.assumptions,
                    explanation.usage,
                )
            else:
                text, assumptions = template_explanation(prediction.sql, result, job.db.dialect)
                extra = None
            usage = prediction.usage + extra if extra is not None else prediction.usage
            answer = _answer(job, prediction, result, text, assumptions)
            answer = answer.model_copy(
                update={
                    "usage": QueryUsage(
                        llm_calls=usage.calls,
                        prompt_tokens=usage.prompt_tokens,
                        completion_tokens=usage.completion_tokens,
                        seconds=round(time.monotonic() - started, 3),
                    )
                }
            )
            return EngineResult(answer=EngineAnswer(answer=answer, result_hash=result.hash))
        finally:
            _tracker.reset(token)

    async def stream(self, job: QueryJob) -> AsyncIterator[dict]:
        """``{"event": "progress", ...}`` per stage, then one ``answer`` or ``error`` event."""
        queue: asyncio.Queue[Progress] = asyncio.Queue()
        work = asyncio.ensure_future(self.answer(job, queue.put_nowait))
        try:
            while not work.done() or not queue.empty():
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, work}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield {"event": "progress", **getter.result().model_dump()}
                else:
                    getter.cancel()
            outcome = work.result()
        finally:
            work.cancel()
        if outcome.error is not None:
            yield {"event": "error", **outcome.error.model_dump()}
        else:
            assert outcome.answer is not None
            yield {
                "event": "answer",
                "result_hash": outcome.answer.result_hash,
                **outcome.answer.answer.model_dump(mode="json"),
            }

    def _store_trace(self, job: QueryJob, trace_json: str) -> None:
        # The trace names the database by its registered name, never by its path.
        path = Path(job.db.path)
        trace_json = trace_json.replace(str(path), job.database).replace(
            str(path.parent), "<database folder>"
        )
        try:
            self.store.put_trace(job.trace_id, job.database, trace_json)
        except Exception as exc:  # a trace is never worth the answer
            log.warning("could not store trace %s: %s", job.trace_id, exc)

    def status(self) -> dict[str, Any]:
        return {"models": True, "indexes": dict(self.index_status)}

    async def aclose(self) -> None:
        for pipeline in self._pipelines.values():
            await pipeline.aclose()
        self._pipelines.clear()
        await self.client.aclose()


def _error(status: int, code: str, message: str) -> EngineResult:
    return EngineResult(error=ErrorBody(status=status, code=code, message=message))


def _answer(
    job: QueryJob,
    prediction: Prediction,
    result: ExecutionResult,
    text: str,
    assumptions: tuple[str, ...],
) -> QueryAnswer:
    hashes = [
        c.exec_result.hash
        for c in prediction.candidates
        if c.exec_result is not None and c.exec_result.ok
    ]
    return QueryAnswer(
        sql=prediction.sql,
        columns=result.columns,
        rows=tuple(tuple(_scalar(v) for v in row) for row in result.rows[: job.max_rows]),
        row_count=result.row_count,
        truncated=result.truncated or result.row_count > job.max_rows,
        explanation=text,
        assumptions=assumptions,
        confidence=confidence_of(result.hash, hashes),
        degraded=prediction.degraded,
        degradation_reasons=prediction.degradation_reasons,
        trace_id=job.trace_id,
        database=job.database,
        profile=job.profile,
    )
