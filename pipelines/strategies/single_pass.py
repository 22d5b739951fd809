"""The references every configuration must beat: one greedy SQL per question (single pass), and
self-consistency — ``samples`` samples of the same prompt at ``temperature``, majority vote on the
execution result (``conf/scaling/self_consistency.yaml``).

    Task ──► prompt (system: CREATE TABLE + 3 example rows per table; user: question [+ evidence])
         ──► model (one request, n = samples, stops at the SQL's closing fence; refused for
             length, again without example rows, then fewer tables: pipelines/prompt_fit.py)
         ──► extract SQL ──► sandbox ──► vote ──► Prediction

    pipeline = SinglePassPipeline(client=client, sandbox=sandbox)   # client: a model behind it
    prediction = await pipeline.answer(task)
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field

from models.errors import InvalidModelOutput
from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatResponse
from pipelines.agents.base import sql_block_request
from pipelines.agents.render import DIALECT_NAME, render_evidence
from pipelines.contracts import CandidateSQL, DatabaseRef, Task
from pipelines.prompt_fit import PromptCut, PromptFit, PromptLadder, within_context
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.schema.cache import SchemaCache
from pipelines.schema.focus import record_focus
from pipelines.schema.reference import ReferenceSchema
from pipelines.selection.bucketing import ExecutionBucketer
from pipelines.selection.tournament import majority_vote
from pipelines.strategies.base import Strategy
from pipelines.strategies.scaling import StrategyScaling
from pipelines.task_run import TaskRun
from pipelines.trace import TraceRecorder


def single_pass_messages(
    prompt: PromptTemplate, task: Task, schema: str, *, cells: str = "", examples: str = ""
) -> tuple[ChatMessage, ...]:
    """The ``single_pass`` prompt for ``task`` over ``schema``, with the rendered cell values and
    solved examples where given."""
    return prompt.render(
        dialect=DIALECT_NAME[task.db.dialect],
        schema=schema,
        cells=cells,
        examples=examples,
        question=task.question.strip(),
        evidence=render_evidence(task.evidence),
    )


class SinglePassScaling(StrategyScaling):
    """One request: a greedy SQL at ``pipeline.single_pass.temperature``, or ``samples`` of them
    at ``temperature`` and the vote over their results (self-consistency)."""

    strategy: Literal["single_pass"] = "single_pass"
    samples: int = Field(default=1, ge=1, le=64)
    temperature: float = Field(default=0.8, ge=0.0, le=2.0)  # of the samples, when more than 1

    @property
    def first_wave(self) -> int:
        return self.samples

    @property
    def retrieves(self) -> bool:
        return False  # the prompt is the schema and the question only


class SinglePassPipeline(Strategy[SinglePassScaling]):
    """One greedy candidate, no refinement, no selection."""

    Settings = SinglePassScaling

    def __init__(self, *, prompt: PromptTemplate | None = None, **parts: Any) -> None:
        super().__init__(**parts)
        self.prompt = prompt or load_prompt("single_pass")
        self._schemas: SchemaCache[ReferenceSchema] = SchemaCache()

    def call_allowance(self) -> int:
        return 1

    async def reference(self, db: DatabaseRef) -> ReferenceSchema:
        """The reference schema prompt of ``db``, read once per pipeline."""
        return await self.once_per_database(
            self._schemas,
            db,
            lambda: self.focused_reference(
                db, self.focuser, sample_rows=self.settings.single_pass.sample_rows
            ),
        )

    async def prompt_ladder(self, task: Task, run: TaskRun) -> PromptLadder:
        """What ``task``'s prompt shows (the schema whole, or focused on the question where the
        focuser finds it large: recorded in ``run``'s trace) and what it gives up to fit."""
        reference = await self.reference(task.db)
        focused = self.focuser.focus(task.db, reference, task.question, task.evidence)
        if focused.focused:
            record_focus(run, focused)
        return PromptLadder.of(reference, focused)

    async def search(self, run: TaskRun, memo: None) -> CandidateSQL | None:
        candidates = await self._generate(run.task, run)
        run.add(candidates)
        return self._vote(candidates, run.recorder)

    @property
    def samples(self) -> int:
        return self.scaling.samples

    @property
    def temperature(self) -> float:
        return (
            self.settings.single_pass.temperature if self.samples == 1 else self.scaling.temperature
        )

    async def _generate(self, task: Task, run: TaskRun) -> list[CandidateSQL]:
        runtime = run.runtime
        run.fit = PromptFit(ladder=await self.prompt_ladder(task, run))

        async def send(cut: PromptCut) -> ChatResponse:
            request = sql_block_request(
                single_pass_messages(self.prompt, task, cut.schema_text or ""),
                n=self.samples,
                temperature=self.temperature,
                max_tokens=self.settings.single_pass.max_tokens,
                seed=self.settings.single_pass.seed if self.samples == 1 else None,
            )
            return await runtime.chat(request, role="generator", agent="single_pass")

        response = await within_context(run, send, stage="single_pass", helps=False)
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
