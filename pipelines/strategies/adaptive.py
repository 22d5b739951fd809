"""The adaptive pipeline: answer at the price of a vote, escalate only where candidates disagree.

    Task ──► reference schema (CREATE TABLE + example rows), the shared system message of every call
         ──► L0 retrieval without an LLM: cell values for the question's n-grams ║ examples for its skeleton
         ──► first wave: greedy + n samples of one prompt (schema, cells, examples, question),
             every candidate executed through the listed repairs (scaling.repairs, no LLM,
             pipelines/repair/rounds.py): a JOIN that joins no key given the schema's key before it
             runs; "no such column" rewritten from the schema (a string an apostrophe broke
             doubled) after; a string filter that matches no row grounded in the stored values;
             bucketed by result
         ──► clear majority? ── yes ──► answer (answered_by = "first_wave")
         ──► fix: the most common errored SQLs ──► SQLFixer with the engine's message ──► check
         ──► widen: more samples of a prompt variant (scaling.widen), where at least
             widen_min_votes candidates agree ──► check
         ──► revise: top bucket empty or all-NULL ──► CritiqueAgent ──► SQLRevisor on "edit" ──► check
         ──► tournament (off by default): top buckets within tournament_margin ──► ReasoningSelector,
             both orders
         ──► still split? select = "likelihood": the SQL the model finds most probable, scored
             teacher-forced (pipelines/selection/likelihood.py); otherwise, or when nothing could be scored,
         ──► majority vote (ties: the greedy candidate's bucket)

Past ``escalate_within_s`` (seconds since the question started) no further step starts (nor a
column rewrite, which executes SQL) and the vote decides: a latency budget that, unlike the
global timeout, leaves the answer undegraded.

Every call shares the schema as its first tokens, so a llama.cpp slot evaluates the schema once
per database and each later call only its own question part. A step that fails is skipped with
a DecisionEvent; a global timeout or the budget answers from what exists (``degraded``). The
prediction names the step whose pool answered and what each step cost.

The L0 retrieval is ``retrieval``; what the pipeline keeps per question and per database, and
its tests of a candidate or bucket, are ``adaptive_state``; its settings ``adaptive_settings``.

    pipeline = AdaptivePipeline(client=client, sandbox=sandbox, scaling=scaling)  # client: a model
    prediction = await pipeline.answer(task)
    prediction.answered_by, [s.step for s in prediction.steps]   ──► ('fix', ['first_wave', 'fix'])
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from math import comb
from typing import Any

from models.errors import InvalidModelOutput
from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatResponse
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import load_taxonomy
from pipelines.agents.base import is_fatal, sql_block_request
from pipelines.agents.reasoning_selector import ReasoningSelector
from pipelines.agents.render import cells_block, solved_examples
from pipelines.agents.types import Bucket
from pipelines.contracts import CandidateSQL, DatabaseRef
from pipelines.indexing.examples.question_skeleton import SchemaWords
from pipelines.prompt_fit import PromptCut, PromptFit, PromptLadder, PromptTooLong, within_context
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.repair.base import RepairContext
from pipelines.repair.refinement import Refiner
from pipelines.repair.registry import build_repairs
from pipelines.repair.rounds import ERROR_ROUNDS, RepairRounds
from pipelines.schema import introspect
from pipelines.schema.cache import SchemaCache
from pipelines.schema.focus import record_focus
from pipelines.selection.bucketing import ExecutionBucketer
from pipelines.selection.likelihood import LikelihoodSelector
from pipelines.selection.tournament import Tournament, TournamentQuestion
from pipelines.sql_hardness import HARDNESS
from pipelines.strategies.adaptive_settings import AdaptiveScaling, WidenStep
from pipelines.strategies.adaptive_state import (
    FIRST_WAVE,
    DatabaseSchema,
    State,
    fixable,
    null_only,
    rated_hardness,
    vote,
)
from pipelines.strategies.base import Strategy
from pipelines.strategies.retrieval import retrieve
from pipelines.strategies.single_pass import single_pass_messages
from pipelines.task_run import TaskRun, record_failure


class AdaptivePipeline(Strategy[AdaptiveScaling]):
    """First wave, then fix / widen / revise / tournament only while the pool has no clear majority."""

    Settings = AdaptiveScaling

    def __init__(self, *, prompt: PromptTemplate | None = None, **parts: Any) -> None:
        super().__init__(**parts)
        settings = self.settings
        self.prompt = prompt or load_prompt("single_pass")
        self.refiner = Refiner.from_settings(settings)
        self.tournament = Tournament(
            ReasoningSelector(settings=settings.agents.selector),
            settings.tournament.model_copy(
                update={"max_finalists": self.scaling.tournament_finalists, "majority_share": None}
            ),
        )
        self.likelihood = LikelihoodSelector(
            max_sqls=self.scaling.select_max_sqls,
            parallel=self.scaling.select_parallel,
            max_tokens=settings.single_pass.max_tokens,
        )
        self.bucketer = ExecutionBucketer()
        self.repairs = build_repairs(self.scaling.repairs)
        self.taxonomy = load_taxonomy()
        self._schemas: SchemaCache[DatabaseSchema] = SchemaCache()

    def call_allowance(self, fixer_passes: int = 1) -> int:
        """Upper bound of LLM calls of one question: every step taken, every request made."""
        a = self.scaling
        first = int(a.greedy) + int(a.samples > 0)
        tournament = comb(a.tournament_finalists, 2) * 2 if a.tournament else 0
        likelihood = a.select_max_sqls if a.select == "likelihood" else 0
        return (
            first + a.fix_max * fixer_passes + len(a.widen) + 2 * a.revise + tournament + likelihood
        )

    def memo(self) -> State:
        return State()

    async def conclude_search(
        self, run: TaskRun, memo: State, chosen: CandidateSQL | None
    ) -> CandidateSQL | None:
        if chosen is None and run.pool:
            chosen = vote(run, self.bucketer.bucket(run.pool))
            run.steps.settle()
        return chosen

    # --- the search ----------------------------------------------------------------------------

    async def search(self, run: TaskRun, state: State) -> CandidateSQL | None:
        a = self.scaling
        task = run.task
        schema = await self._schema(task.db)
        run.context, run.retrieval = await retrieve(
            run,
            schema.words,
            self.settings.understanding,
            cell_retriever=self.cell_retriever,
            example_retriever=self.example_retriever,
            own_examples=self.own_examples,
        )
        run.recorder.context = run.context  # the trace shows what the prompts were given
        focused = self.focuser.focus(
            task.db, schema.reference, task.question, task.evidence, run.context.cell_hits
        )
        if focused.focused:
            record_focus(run, focused)
        run.light = run.ddl = focused.text  # every agent's shared system message
        run.fit = PromptFit(ladder=PromptLadder.of(schema.reference, focused))
        state.repairs = RepairRounds(
            self.repairs, RepairContext(index=schema.index, taxonomy=self.taxonomy), self.stage
        )

        steps: list[tuple[str, bool, Callable[[], Awaitable[object]]]] = [
            (FIRST_WAVE, True, lambda: self._first_wave(run, state)),
            ("fix", a.fix_max > 0, lambda: self._fix(run, state)),
            *(("widen", True, lambda w=w: self._widen(run, w, state)) for w in a.widen),
            ("revise", a.revise, lambda: self._revise(run)),
        ]
        for name, enabled, step in steps:
            if not enabled or (name != FIRST_WAVE and not self._worth(name, run, state)):
                continue
            if name != FIRST_WAVE and self._out_of_time(name, run, state):
                break
            run.steps.open(name)
            await step()
            run.steps.close()
            buckets = self.bucketer.bucket(run.pool)
            run.recorder.snapshot_buckets(name, buckets)
            if self._clear_majority(buckets) and self._may_answer(name, buckets[0], run, state):
                run.recorder.decide(
                    "adaptive.clear_majority",
                    name,
                    share=self._share(buckets),
                    votes=buckets[0].size,
                )
                run.steps.answered_by = run.steps.answered_by or name
                if a.early_stop:
                    return vote(run, buckets)
            else:
                run.steps.answered_by = ""
        buckets = self.bucketer.bucket(run.pool)
        if (
            a.tournament
            and self._close(buckets)
            and not self._out_of_time("tournament", run, state)
        ):
            run.steps.open("tournament")
            winner = await self._tournament(run, buckets)
            run.steps.close()
            if winner is not None:
                run.steps.answered_by = run.steps.answered_by or "tournament"
                return winner
        if (
            a.select == "likelihood"
            and not run.steps.answered_by
            and not self._out_of_time("likelihood", run, state)
        ):
            run.steps.settle()  # the vote's step, should nothing be scored
            run.steps.open("likelihood")
            plain = a.select_prompt == "plain"
            chosen = await self.likelihood.pick(
                run,
                buckets,
                lambda: self._messages(run, examples=not plain, cells=not plain),
                helps=self._helps(run, examples=not plain, cells=not plain),
            )
            run.steps.close()
            if chosen is not None:
                run.steps.answered_by = "likelihood"
                return chosen
        run.steps.settle()
        return vote(run, buckets)

    async def _schema(self, db: DatabaseRef) -> DatabaseSchema:
        """The reference schema text, the schema's words (for skeletons) and the schema the
        repairs read, once per database."""

        async def read() -> DatabaseSchema:
            reference = await self.focused_reference(
                db, self.focuser, sample_rows=self.settings.single_pass.sample_rows
            )
            view = await asyncio.to_thread(introspect, db, 0)
            return DatabaseSchema(
                reference=reference,
                words=SchemaWords.from_view(view),
                index=SchemaIndex.from_view(view),
            )

        return await self.once_per_database(self._schemas, db, read)

    # --- steps ---------------------------------------------------------------------------------

    async def _first_wave(self, run: TaskRun, state: State) -> None:
        a = self.scaling
        if a.greedy:  # first, alone: the samples after it reuse the prompt it evaluated
            await self._sample(run, state, n=1, temperature=0.0, producer=f"{FIRST_WAVE}/greedy")
        if a.samples:
            await self._sample(
                run,
                state,
                n=a.samples,
                temperature=a.temperature,
                producer=f"{FIRST_WAVE}/T={a.temperature:g}",
            )

    async def _widen(self, run: TaskRun, widen: WidenStep, state: State) -> None:
        await self._sample(
            run,
            state,
            n=widen.n,
            temperature=widen.temperature,
            examples=widen.examples,
            cells=widen.cells,
            producer=f"widen/{widen.variant}/T={widen.temperature:g}",
        )

    async def _sample(
        self,
        run: TaskRun,
        state: State,
        *,
        n: int,
        temperature: float,
        producer: str,
        examples: bool = True,
        cells: bool = True,
    ) -> None:

        async def send(cut: PromptCut) -> ChatResponse:
            request = sql_block_request(
                self._messages(run, examples=examples, cells=cells),
                n=n,
                temperature=temperature,
                max_tokens=self.settings.single_pass.max_tokens,
                seed=self.settings.single_pass.seed if temperature == 0.0 else None,
            )
            return await run.runtime.chat(
                request, role="generator", agent=producer.rsplit("/T=", 1)[0]
            )

        try:
            response = await within_context(
                run, send, stage="adaptive", helps=self._helps(run, examples=examples, cells=cells)
            )
        except Exception as exc:  # noqa: BLE001 - degradation: the other requests still answer
            if is_fatal(exc) or isinstance(exc, PromptTooLong):  # no request of it can answer
                raise
            record_failure(run, "generator", "adaptive", exc, generator=producer)
            return
        candidates = []
        for text in response.texts:
            try:
                candidates.append(CandidateSQL(sql=extract_sql(text), producer=producer))
            except InvalidModelOutput:
                run.recorder.decide("generator_unusable", "adaptive", generator=producer)
        repairs = state.repairs
        executed = await run.execute_all(repairs.before_run(candidates))
        repaired = await repairs.after_error(
            run, executed, lambda: self._out_of_time(ERROR_ROUNDS, run, state)
        )
        executed = await repairs.ground(run, executed)
        repaired = await repairs.ground(run, repaired)
        run.add(executed)
        run.add(repaired)

    def _messages(self, run: TaskRun, *, examples: bool, cells: bool) -> tuple[ChatMessage, ...]:
        """The generation prompt: schema, retrieved cell values and examples where asked and the
        prompt has not given them up to fit the model's context, question."""
        task, limit = run.task, self.settings.understanding.examples_in_prompt
        examples, cells = examples and run.fit.cut.help, cells and run.fit.cut.help
        return single_pass_messages(
            self.prompt,
            task,
            run.light,
            cells=cells_block(run.context.cell_hits) if cells else "",
            examples=solved_examples(run.context.example_hits, task.db.db_id, limit)
            if examples
            else "",
        )

    def _helps(self, run: TaskRun, *, examples: bool, cells: bool) -> bool:
        """Whether the prompt shows retrieved examples or cell values, so giving them up to fit
        the model's context makes it smaller."""
        return self._messages(run, examples=examples, cells=cells) != self._messages(
            run, examples=False, cells=False
        )

    async def _fix(self, run: TaskRun, state: State) -> None:
        """Repair the ``fix_max`` most common errored SQLs; a repair carries its duplicates' votes."""
        counts: dict[str, list[CandidateSQL]] = {}
        for c in fixable(run, state):
            counts.setdefault(c.sql, []).append(c)
        chosen = sorted(counts.values(), key=len, reverse=True)[: self.scaling.fix_max]
        await self.refiner.fix_all(
            run, [c for group in chosen for c in group], max_passes=1, siblings_in_sequence=False
        )

    async def _revise(self, run: TaskRun) -> None:
        buckets = self.bucketer.bucket(run.pool)
        top = buckets[0]
        critiques = await self.refiner.critique_all(run, buckets, [top])
        for bucket, critique in critiques:
            run.critiques[bucket.hash] = critique
            run.recorder.critiques.append(critique)
        edits = [(b, c) for b, c in critiques if c.verdict == "edit"]
        if edits:
            await self.refiner.revise_all(run, buckets, edits, 1)

    async def _tournament(self, run: TaskRun, buckets: Sequence[Bucket]) -> CandidateSQL | None:
        task = run.task
        result = await self.tournament.play(
            buckets,
            TournamentQuestion(
                question=task.question, evidence=task.evidence, schema_text=run.light
            ),
            run.runtime,
            run.recorder,
            "tournament",
        )
        return result.winner.representative if result is not None else None

    # --- decisions -----------------------------------------------------------------------------

    def _worth(self, step: str, run: TaskRun, state: State) -> bool:
        """Whether an escalation step has anything to work on."""
        if step == "fix":
            return bool(fixable(run, state))
        buckets = self.bucketer.bucket(run.pool)
        if step == "widen":
            largest = max((b.size for b in buckets if not b.error), default=0)
            if largest < self.scaling.widen_min_votes:
                run.recorder.decide("adaptive.no_agreement", step, largest=largest)
                return False
            return True
        if step == "revise":
            return (
                bool(buckets)
                and not buckets[0].error
                and (buckets[0].empty or null_only(buckets[0]))
            )
        return True

    @staticmethod
    def _answers(buckets: Sequence[Bucket]) -> int:
        return sum(b.size for b in buckets if not b.error)

    def _share(self, buckets: Sequence[Bucket]) -> float:
        answers = self._answers(buckets)
        return buckets[0].size / answers if answers and buckets else 0.0

    def _clear_majority(self, buckets: Sequence[Bucket]) -> bool:
        if not buckets or buckets[0].error or buckets[0].empty or null_only(buckets[0]):
            return False
        top, a = buckets[0], self.scaling
        runner_up = buckets[1].size if len(buckets) > 1 and not buckets[1].error else 0
        return (
            top.size > runner_up
            and top.size >= a.stop_min_votes
            and self._share(buckets) >= a.stop_share
        )

    def _may_answer(self, step: str, top: Bucket, run: TaskRun, state: State) -> bool:
        """A clear majority answers unless its SQL rates harder than ``stop_max_hardness`` and a
        widening is still to come: the first wave agrees on wrong answers most on hard questions."""
        a = self.scaling
        if a.stop_max_hardness == "extra" or not a.widen:
            return True
        if any(cost.step == "widen" for cost in run.steps.taken):
            return True
        hardness = rated_hardness(top.representative.sql)
        if HARDNESS.index(hardness) <= HARDNESS.index(a.stop_max_hardness):
            return True
        run.recorder.decide("adaptive.hard_majority", step, hardness=hardness, votes=top.size)
        return False

    def _out_of_time(self, step: str, run: TaskRun, state: State) -> bool:
        """Past ``escalate_within_s`` since the question started: ``step`` and every later one
        are left out (one decision in the trace)."""
        limit = self.scaling.escalate_within_s
        if limit is None:
            return False
        spent = time.monotonic() - run.started  # only grows: once past, every later check is too
        if spent < limit:
            return False
        if not state.out_of_time:
            state.out_of_time = True
            run.recorder.decide(
                "adaptive.out_of_time", step, spent_s=round(spent, 1), limit_s=limit
            )
        return True

    def _close(self, buckets: Sequence[Bucket]) -> bool:
        """The two largest answers are within ``tournament_margin`` of all answers."""
        answers = [b for b in buckets if not b.error]
        if len(answers) < 2:
            return False
        return (
            answers[0].size - answers[1].size
        ) <= self.scaling.tournament_margin * self._answers(buckets)
