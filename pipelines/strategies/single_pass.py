"""The references every configuration must beat: one greedy SQL per question (single pass), and
self-consistency — ``sum(scaling.k)`` samples of the same prompt at ``temperatures[0]``, majority vote on the
execution result (``conf/scaling/self_consistency.yaml``).

    Task ──► prompt (system: CREATE TABLE + 3 example rows per table; user: question [+ evidence])
         ──► model (one request, n = sum(k) samples, stops at the SQL's closing fence)
         ──► extract SQL ──► sandbox ──► vote ──► Prediction

    pipeline = SinglePassPipeline(client=client, sandbox=sandbox)   # client: a model behind it
    prediction = await pipeline.answer(task)
"""

from __future__ import annotations

import asyncio

from models.errors import InvalidModelOutput, ModelError
from models.sql_extract import extract_sql
from models.types import ChatRequest
from pipelines.agents.base import END_OF_SQL_BLOCK, SQL_BLOCK_GRAMMAR
from pipelines.agents.render import DIALECT_NAME, render_evidence
from pipelines.agents.runtime import ModelClientLike
from pipelines.contracts import CandidateSQL, DatabaseRef, Prediction, ScalingSettings, Task
from pipelines.database_rules import settle
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.schema.cache import SchemaCache
from pipelines.schema.focus import SchemaFocuser, record_focus
from pipelines.schema.reference import ReferenceSchema, SchemaReadError, reference_schema
from pipelines.selection.bucketing import ExecutionBucketer
from pipelines.selection.tournament import majority_vote
from pipelines.settings import FocusSettings, PipelineSettings, SinglePassSettings
from pipelines.strategies.base import Strategy
from pipelines.task_run import TaskRun
from pipelines.trace import ReasoningTrace, TraceRecorder, TraceSink


class SinglePassPipeline(Strategy):
    """One greedy candidate, no refinement, no selection."""

    def __init__(
        self,
        *,
        client: ModelClientLike,
        sandbox: object,
        settings: SinglePassSettings = SinglePassSettings(),
        scaling: ScalingSettings = ScalingSettings(single_pass=True, k={}, temperatures=(0.0,)),
        sinks: tuple[TraceSink, ...] = (),
        prompt: PromptTemplate | None = None,
        model_name: str = "",
        focuser: SchemaFocuser | None = None,
    ) -> None:
        super().__init__(
            client=client, sandbox=sandbox, scaling=scaling, sinks=sinks, model_name=model_name
        )
        # built alone: each rule's choice for a database that was not measured (see settle)
        self.settings = settle(PipelineSettings(single_pass=settings), scaling, None)[0].single_pass
        self.prompt = prompt or load_prompt("single_pass")
        self._schemas: SchemaCache[ReferenceSchema] = SchemaCache()
        # Without a focuser the schema is always shown whole (the baseline's own prompt).
        self.focuser = focuser or SchemaFocuser(FocusSettings(above_tokens=None))

    async def reference(self, db: DatabaseRef) -> ReferenceSchema:
        """The reference schema prompt of ``db``, read once per pipeline (one task's timeout does
        not cancel the read other tasks on the database wait for)."""

        async def read() -> ReferenceSchema:
            reference = await reference_schema(
                self.executor,
                db,
                sample_rows=self.settings.sample_rows,
                column_notes=self.settings.column_notes,
            )
            await self.focuser.prepare(db, reference)
            return reference

        return await self._schemas.get(db, read)

    async def schema_text(self, task: Task, run: TaskRun | None = None) -> str:
        """The schema ``task``'s prompt shows: whole, or focused on the question where the
        focuser finds the schema large (recorded in ``run``'s trace)."""
        focused = self.focuser.focus(
            task.db, await self.reference(task.db), task.question, task.evidence
        )
        if focused.focused and run is not None:
            record_focus(run, focused)
        return focused.text

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]:
        run = TaskRun.start(
            task,
            client=self.client,
            executor=self.executor,
            scaling=self.scaling,
            call_cap=1,
            model_name=self.model_name,
        )
        candidates: list[CandidateSQL] = []
        error: str | None = None
        try:
            async with asyncio.timeout(self.scaling.global_timeout_s):
                candidates = await self._generate(task, run)
        except (ModelError, SchemaReadError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        except TimeoutError:
            error = f"global timeout of {self.scaling.global_timeout_s:g}s"
            run.recorder.decide("global_timeout", "single_pass", degradation=True)
        run.add(candidates)
        chosen = self._vote(candidates, run.recorder)
        return run.conclude(self.sinks, chosen=chosen, failure=error or "no SQL produced")

    @property
    def samples(self) -> int:
        return max(1, self.scaling.candidates)

    @property
    def temperature(self) -> float:
        return self.settings.temperature if self.samples == 1 else self.scaling.temperatures[0]

    async def _generate(self, task: Task, run: TaskRun) -> list[CandidateSQL]:
        runtime = run.runtime
        schema = await self.schema_text(task, run)
        messages = self.prompt.render(
            dialect=DIALECT_NAME[task.db.dialect],
            schema=schema,
            cells="",
            examples="",
            question=task.question.strip(),
            evidence=render_evidence(task.evidence),
        )
        request = ChatRequest(
            messages=messages,
            n=self.samples,
            temperature=self.temperature,
            max_tokens=self.settings.max_tokens,
            stop=(END_OF_SQL_BLOCK,),  # generation ends with the SQL's code block
            grammar=SQL_BLOCK_GRAMMAR,
            grammar_optional=True,
            seed=self.settings.seed if self.samples == 1 else None,
        )
        response = await runtime.chat(request, role="generator", agent="single_pass")
        sqls = []
        for text in response.texts:
            try:
                sqls.append(extract_sql(text))
            except InvalidModelOutput:
                if self.samples == 1:
                    raise
        results = await asyncio.gather(
            *(runtime.execute(sql, task.db, agent="single_pass") for sql in sqls)
        )
        producer = f"single_pass/T={self.temperature:g}"
        return [
            CandidateSQL(sql=sql, producer=producer, exec_result=r) for sql, r in zip(sqls, results)
        ]

    @staticmethod
    def _vote(candidates: list[CandidateSQL], recorder: TraceRecorder) -> CandidateSQL | None:
        """The greedy candidate, or the majority result of several samples (self-consistency)."""
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        buckets = ExecutionBucketer().bucket(candidates)
        recorder.snapshot_buckets("vote", buckets)
        ranked = majority_vote([b for b in buckets if not b.error]) or buckets
        recorder.ranking = tuple(b.hash for b in ranked)
        return ranked[0].representative
