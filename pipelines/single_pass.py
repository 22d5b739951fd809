"""The reference every configuration must beat: one greedy SQL per question.

    Task ──► prompt (CREATE TABLE + 3 example rows per table + question [+ evidence])
         ──► model (T=0, one sample) ──► extract SQL ──► sandbox ──► Prediction(candidates=(the one,))

    >>> pipeline = SinglePassPipeline(client=client, sandbox=sandbox)   # doctest: +SKIP
    >>> prediction = await pipeline.answer(task)                         # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import time

from models.budget import TokenBudget
from models.errors import ModelError
from models.sql_extract import extract_sql
from models.types import ChatRequest
from pipelines.agents.runtime import AgentRuntime, ModelClientLike, as_executor
from pipelines.contracts import CandidateSQL, DatabaseRef, Prediction, ScalingConfig, Task
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.schema_text import SchemaReadError, reference_schema
from pipelines.settings import SinglePassSettings
from pipelines.trace import ReasoningTrace, SafeSink, TraceRecorder, TraceSink, safe_sinks

_DIALECT_NAME = {"sqlite": "SQLite", "duckdb": "DuckDB"}


def render_evidence(evidence: str) -> str:
    return f"-- External knowledge: {evidence.strip()}" if evidence.strip() else ""


class SinglePassPipeline:
    """One greedy candidate, no refinement, no selection."""

    def __init__(
        self,
        *,
        client: ModelClientLike,
        sandbox: object,
        settings: SinglePassSettings = SinglePassSettings(),
        scaling: ScalingConfig = ScalingConfig(single_pass=True),
        sinks: tuple[TraceSink, ...] = (),
        prompt: PromptTemplate | None = None,
        model_name: str = "",
    ) -> None:
        self.client = client
        self.executor = as_executor(sandbox)
        self.settings = settings
        self.scaling = scaling
        self.sinks: tuple[SafeSink, ...] = safe_sinks(sinks)
        self.prompt = prompt or load_prompt("single_pass")
        self.model_name = model_name
        self._schemas: dict[tuple[str, str], asyncio.Future[str]] = {}

    async def schema_text(self, db: DatabaseRef) -> str:
        """The reference schema prompt of ``db``, read once per pipeline."""
        key = (db.dialect, db.path)
        if key not in self._schemas:
            self._schemas[key] = asyncio.ensure_future(
                reference_schema(self.executor, db, sample_rows=self.settings.sample_rows)
            )
        try:
            return await self._schemas[key]
        except BaseException:
            self._schemas.pop(key, None)  # do not cache a failure
            raise

    async def answer(self, task: Task) -> Prediction:
        prediction, _ = await self.answer_with_trace(task)
        return prediction

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]:
        started = time.monotonic()
        recorder = TraceRecorder(task.task_id, task.question, task.db.db_id)
        runtime = AgentRuntime(
            client=self.client,
            executor=self.executor,
            recorder=recorder,
            budget=TokenBudget(max_tokens=self.scaling.token_budget),
            call_cap=1,
            model_name=self.model_name,
        )
        candidate: CandidateSQL | None = None
        error: str | None = None
        try:
            async with asyncio.timeout(self.scaling.global_timeout_s):
                candidate = await self._generate(task, runtime)
        except (ModelError, SchemaReadError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        except TimeoutError:
            error = f"global timeout of {self.scaling.global_timeout_s:g}s"
            recorder.decide("global_timeout", "single_pass", degradation=True)
        if candidate is not None:
            recorder.candidates.append(candidate)
        prediction = Prediction(
            task_id=task.task_id,
            sql=candidate.sql if candidate else "",
            producer=candidate.producer if candidate else "",
            exec_result=candidate.exec_result if candidate else None,
            candidates=(candidate,) if candidate else (),
            usage=runtime.usage,
            latency_s=time.monotonic() - started,
            degraded=bool(recorder.decisions),
            degradation_reasons=tuple(d.label for d in recorder.decisions if d.degradation),
            error=None if candidate else (error or "no SQL produced"),
            trace_path=self._location(task.task_id),
        )
        trace = recorder.freeze(prediction, gold_sql=task.gold_sql)
        for sink in self.sinks:
            sink.write(trace)
        return prediction, trace

    async def _generate(self, task: Task, runtime: AgentRuntime) -> CandidateSQL | None:
        schema = await self.schema_text(task.db)
        messages = self.prompt.render(
            dialect=_DIALECT_NAME[task.db.dialect],
            schema=schema,
            question=task.question.strip(),
            evidence=render_evidence(task.evidence),
        )
        request = ChatRequest(
            messages=messages,
            n=1,
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
            seed=self.settings.seed,
        )
        response = await runtime.chat(request, role="generator", agent="single_pass")
        sql = extract_sql(response.texts[0])
        result = await runtime.execute(sql, task.db, agent="single_pass")
        return CandidateSQL(
            sql=sql,
            producer=f"single_pass/T={self.settings.temperature:g}",
            rationale=None,
            exec_result=result,
        )

    def _location(self, task_id: str) -> str | None:
        for sink in self.sinks:
            if (where := sink.location(task_id)) is not None:
                return where
        return None

    async def aclose(self) -> None:
        for sink in self.sinks:
            sink.close()
