"""The adaptive pipeline: answer at the price of a vote, escalate only where candidates disagree.

    Task ──► reference schema (CREATE TABLE + example rows), the shared system message of every call
         ──► L0 retrieval without an LLM: cell values for the question's n-grams ║ examples for its skeleton
         ──► first wave: greedy + n samples of one prompt (schema, cells, examples, question),
             every candidate executed; "no such column" rewritten from the schema (no LLM,
             pipelines/repair/columns.py; a string an apostrophe broke, pipelines/repair/quotes.py);
             a string filter that matches no row grounded in the stored values
             (pipelines/repair/values.py); bucketed by result
         ──► clear majority? ── yes ──► answer (answered_by = "first_wave")
         ──► fix: the most common errored SQLs ──► SQLFixer with the engine's message ──► check
         ──► widen: more samples of a prompt variant (scaling.adaptive.widen), where at least
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

The L0 retrieval is ``adaptive_retrieval``; what the pipeline keeps per question and per
database, and its tests of a candidate or bucket, are ``adaptive_state``.

    pipeline = AdaptivePipeline(client=client, sandbox=sandbox, scaling=scaling)  # client: a model
    prediction = await pipeline.answer(task)
    prediction.answered_by, [s.step for s in prediction.steps]   ──► ('fix', ['first_wave', 'fix'])
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from math import comb

from models.errors import InvalidModelOutput
from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatRequest
from pipelines.agents.base import END_OF_SQL_BLOCK, SQL_BLOCK_GRAMMAR, is_fatal
from pipelines.agents.reasoning_selector import ReasoningSelector
from pipelines.agents.render import DIALECT_NAME, cells_block, render_evidence, solved_examples
from pipelines.agents.runtime import ModelClientLike
from pipelines.agents.types import Bucket
from pipelines.contracts import (
    AdaptiveScaling,
    CandidateSQL,
    DatabaseRef,
    Prediction,
    ScalingSettings,
    Task,
    WidenStep,
)
from pipelines.database_rules import settle
from pipelines.indexing.examples.own_examples import OwnExampleRetriever
from pipelines.indexing.examples.question_skeleton import SchemaWords
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.repair.columns import ColumnRepair
from pipelines.repair.joins import JoinRepair
from pipelines.repair.quotes import QuoteRepair
from pipelines.repair.refinement import Refiner
from pipelines.repair.values import ValueRepair
from pipelines.schema import introspect
from pipelines.schema.cache import SchemaCache
from pipelines.schema.focus import SchemaFocuser, record_focus
from pipelines.schema.joins import join_graph
from pipelines.schema.reference import SchemaReadError, reference_schema
from pipelines.selection.bucketing import ExecutionBucketer
from pipelines.selection.likelihood import LikelihoodSelector
from pipelines.selection.tournament import Tournament, TournamentQuestion
from pipelines.settings import PipelineSettings
from pipelines.sql_hardness import HARDNESS
from pipelines.strategies.adaptive_retrieval import retrieve
from pipelines.strategies.adaptive_state import (
    DatabaseSchema,
    State,
    fixable,
    has_rows,
    nothing_found,
    null_only,
    rated_hardness,
)
from pipelines.strategies.base import Strategy
from pipelines.task_run import TaskRun, describe, record_failure, within_limits
from pipelines.trace import ReasoningTrace, TraceSink

FIRST_WAVE = "first_wave"


def call_allowance(adaptive: AdaptiveScaling, fixer_passes: int = 1) -> int:
    """Upper bound of LLM calls of one question: every step taken, every request made."""
    first = int(adaptive.greedy) + int(adaptive.samples > 0)
    tournament = comb(adaptive.tournament_finalists, 2) * 2 if adaptive.tournament else 0
    likelihood = adaptive.select_max_sqls if adaptive.select == "likelihood" else 0
    return (
        first
        + adaptive.fix_max * fixer_passes
        + len(adaptive.widen)
        + 2 * adaptive.revise
        + tournament
        + likelihood
    )


class AdaptivePipeline(Strategy):
    """First wave, then fix / widen / revise / tournament only while the pool has no clear majority."""

    def __init__(
        self,
        *,
        client: ModelClientLike,
        sandbox: object,
        scaling: ScalingSettings,
        settings: PipelineSettings = PipelineSettings(),
        cell_retriever: object | None = None,
        example_retriever: object | None = None,
        sinks: Sequence[TraceSink] = (),
        model_name: str = "",
        prompt: PromptTemplate | None = None,
        focuser: SchemaFocuser | None = None,
        own_examples: OwnExampleRetriever | None = None,
    ) -> None:
        if scaling.adaptive is None:
            raise ValueError(
                "scaling.adaptive is not set: use build_pipeline, which picks the pipeline"
            )
        settings, scaling, _ = settle(settings, scaling, None)  # built alone: see settle
        super().__init__(
            client=client, sandbox=sandbox, scaling=scaling, sinks=sinks, model_name=model_name
        )
        self.adaptive = scaling.adaptive
        self.settings = settings
        self.prompt = prompt or load_prompt("single_pass")
        self.cell_retriever = cell_retriever
        self.example_retriever = example_retriever
        self.own_examples = own_examples
        agents = settings.agents
        self.refiner = Refiner.from_settings(settings)
        self.tournament = Tournament(
            ReasoningSelector(settings=agents.selector),
            settings.tournament.model_copy(
                update={"max_finalists": self.adaptive.tournament_finalists, "majority_share": None}
            ),
        )
        self.likelihood = LikelihoodSelector(
            max_sqls=self.adaptive.select_max_sqls,
            parallel=self.adaptive.select_parallel,
            max_tokens=settings.single_pass.max_tokens,
        )
        self.bucketer = ExecutionBucketer()
        self._schemas: SchemaCache[DatabaseSchema] = SchemaCache()
        self.focuser = focuser or SchemaFocuser(settings.focus)

    # --- public API ----------------------------------------------------------------------------

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]:
        run = TaskRun.start(
            task,
            client=self.client,
            executor=self.executor,
            scaling=self.scaling,
            call_cap=call_allowance(self.adaptive),
            model_name=self.model_name,
        )
        state = State()
        chosen: CandidateSQL | None = None
        failure: str | None = None
        try:
            chosen = await within_limits(run, "adaptive", self._search(run, state))
        except SchemaReadError as exc:
            failure = f"cannot read the schema of {task.db.db_id}: {exc}"
        state.close_step(run.runtime)
        if chosen is None and run.pool:
            chosen = self._vote(run, self.bucketer.bucket(run.pool))
            state.settle()
        return run.conclude(
            self.sinks,
            chosen=chosen,
            failure=failure,
            answered_by=state.answered_by if chosen else "",
            steps=tuple(state.steps),
            retrieval=state.retrieval,
        )

    # --- the search ----------------------------------------------------------------------------

    async def _search(self, run: TaskRun, state: State) -> CandidateSQL | None:
        a = self.adaptive
        task = run.task
        schema = await self._schema(task.db)
        run.context, state.retrieval = await retrieve(
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
        state.repair, state.values, state.joins = schema.repair, schema.values, schema.joins
        state.quotes = schema.quotes if a.quote_repair else None

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
            state.open_step(name, run.runtime)
            await step()
            state.close_step(run.runtime)
            buckets = self.bucketer.bucket(run.pool)
            run.recorder.snapshot_buckets(name, buckets)
            if self._clear_majority(buckets) and self._may_answer(name, buckets[0], run, state):
                run.recorder.decide(
                    "adaptive.clear_majority",
                    name,
                    share=self._share(buckets),
                    votes=buckets[0].size,
                )
                state.answered_by = state.answered_by or name
                if a.early_stop:
                    return self._vote(run, buckets)
            else:
                state.answered_by = ""
        buckets = self.bucketer.bucket(run.pool)
        if (
            a.tournament
            and self._close(buckets)
            and not self._out_of_time("tournament", run, state)
        ):
            state.open_step("tournament", run.runtime)
            winner = await self._tournament(run, buckets)
            state.close_step(run.runtime)
            if winner is not None:
                state.answered_by = state.answered_by or "tournament"
                return winner
        if (
            a.select == "likelihood"
            and not state.answered_by
            and not self._out_of_time("likelihood", run, state)
        ):
            state.settle()  # the vote's step, should nothing be scored
            state.open_step("likelihood", run.runtime)
            plain = a.select_prompt == "plain"
            chosen = await self.likelihood.pick(
                run, buckets, self._messages(run, examples=not plain, cells=not plain)
            )
            state.close_step(run.runtime)
            if chosen is not None:
                state.answered_by = "likelihood"
                return chosen
        state.settle()
        return self._vote(run, buckets)

    async def _schema(self, db: DatabaseRef) -> DatabaseSchema:
        """The reference schema text, the schema's words (for skeletons) and its column repair,
        read once per database."""

        async def read() -> DatabaseSchema:
            reference = await reference_schema(
                self.executor,
                db,
                sample_rows=self.settings.single_pass.sample_rows,
                column_notes=self.settings.single_pass.column_notes,
            )
            await self.focuser.prepare(db, reference)
            view = await asyncio.to_thread(introspect, db, 0)
            graph = join_graph(view)  # declared and inferred keys, shared by the three repairs
            return DatabaseSchema(
                reference=reference,
                words=SchemaWords.from_view(view),
                repair=ColumnRepair(view, graph),
                values=ValueRepair(view, graph),
                joins=JoinRepair(view, graph),
                quotes=QuoteRepair(view.dialect),
            )

        try:
            return await self._schemas.get(db, read)
        except SchemaReadError:
            raise
        except Exception as exc:  # noqa: BLE001 - this task fails alone
            raise SchemaReadError(describe(exc)) from exc

    # --- steps ---------------------------------------------------------------------------------

    async def _first_wave(self, run: TaskRun, state: State) -> None:
        a = self.adaptive
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
        request = ChatRequest(
            messages=self._messages(run, examples=examples, cells=cells),
            n=n,
            temperature=temperature,
            max_tokens=self.settings.single_pass.max_tokens,
            stop=(END_OF_SQL_BLOCK,),
            grammar=SQL_BLOCK_GRAMMAR,
            grammar_optional=True,
            seed=self.settings.single_pass.seed if temperature == 0.0 else None,
        )
        try:
            response = await run.runtime.chat(
                request, role="generator", agent=producer.rsplit("/T=", 1)[0]
            )
        except Exception as exc:  # noqa: BLE001 - degradation: the other requests still answer
            if is_fatal(exc):
                raise
            record_failure(run, "generator", "adaptive", exc, generator=producer)
            return
        candidates = []
        for text in response.texts:
            try:
                candidates.append(CandidateSQL(sql=extract_sql(text), producer=producer))
            except InvalidModelOutput:
                run.recorder.decide("generator_unusable", "adaptive", generator=producer)
        executed = await run.execute_all(self._rejoin(state, candidates))
        repaired = await self._repair_columns(run, state, executed)
        run.add(await self._ground_values(run, state, executed))
        run.add(await self._ground_values(run, state, repaired))

    def _messages(self, run: TaskRun, *, examples: bool, cells: bool) -> tuple[ChatMessage, ...]:
        """The generation prompt: schema, retrieved cell values and examples where asked, question."""
        task, limit = run.task, self.settings.understanding.examples_in_prompt
        return self.prompt.render(
            dialect=DIALECT_NAME[task.db.dialect],
            schema=run.light,
            cells=cells_block(run.context.cell_hits) if cells else "",
            examples=solved_examples(run.context.example_hits, task.db.db_id, limit)
            if examples
            else "",
            question=task.question.strip(),
            evidence=render_evidence(task.evidence),
        )

    def _rejoin(self, state: State, candidates: list[CandidateSQL]) -> list[CandidateSQL]:
        """Each candidate whose JOIN ... ON names no key between the tables, with the schema's
        one join key in its place (pipelines/repair/joins.py), before it runs."""
        if not self.adaptive.join_repair or state.joins is None:
            return candidates
        out = []
        for candidate in candidates:
            proposal = state.joins.propose(candidate.sql)
            out.append(
                candidate.model_copy(
                    update={"sql": proposal, "lineage": candidate.lineage + ("rejoin",)}
                )
                if proposal is not None
                else candidate
            )
        return out

    async def _ground_values(
        self, run: TaskRun, state: State, candidates: Sequence[CandidateSQL]
    ) -> list[CandidateSQL]:
        """Each candidate that found nothing (no rows, or counts of zero), or that excludes a
        literal (``!=``), and whose string filters name no stored value, replaced by its rewrite
        that names them (pipelines/repair/values.py) when the rewrite finds something; a rewrite
        keeps its candidate's producer (a SQL drawn twice is probed once)."""
        repair = state.values
        if not self.adaptive.value_repair or repair is None:
            return list(candidates)
        out = []
        for candidate in candidates:
            empty = nothing_found(candidate)
            if candidate.sql not in state.grounded and (
                empty or (has_rows(candidate) and repair.excludes_a_literal(candidate.sql))
            ):
                state.grounded[candidate.sql] = await self._grounded(
                    run, repair, candidate, negated_only=not empty
                )
            rewrite = state.grounded.get(candidate.sql)
            out.append(
                rewrite.model_copy(update={"producer": candidate.producer})
                if rewrite
                else candidate
            )
        return out

    async def _grounded(
        self, run: TaskRun, repair: ValueRepair, candidate: CandidateSQL, *, negated_only: bool
    ) -> CandidateSQL | None:
        proposal = await repair.propose(
            candidate.sql,
            lambda probe: run.runtime.execute(probe, run.task.db, agent="value_repair"),
            negated_only=negated_only,
        )
        rewrite = None
        if proposal is not None and proposal != candidate.sql:
            (rewrite,) = await run.execute_all(
                [
                    candidate.model_copy(
                        update={"sql": proposal, "lineage": candidate.lineage + ("values",)}
                    )
                ],
                agent="value_repair",
            )
        grounded = rewrite is not None and not nothing_found(rewrite)
        run.recorder.decide(
            "value_repair",
            "adaptive",
            generator=candidate.producer,
            proposed=proposal is not None,
            grounded=grounded,
        )
        return rewrite if grounded else None

    async def _repair_columns(
        self, run: TaskRun, state: State, executed: Sequence[CandidateSQL]
    ) -> list[CandidateSQL]:
        """Schema-grounded rewrites of the candidates whose error names an unbound column (or a
        string an apostrophe broke), up to ``column_repair`` rounds each; a rewrite keeps its
        candidate's producer (and vote)."""
        rounds, repair = self.adaptive.column_repair, state.repair
        if rounds == 0 or repair is None:
            return []
        out: list[CandidateSQL] = []
        done: dict[str, CandidateSQL | None] = {}  # errored SQL -> its last rewrite, executed
        for candidate in executed:
            if candidate.exec_result.ok:
                continue
            if candidate.sql not in done:
                current, last = candidate, None
                for _ in range(rounds):
                    # A rewrite runs its SQL, and one that joins its way into the sandbox's limits
                    # takes as long as the limit (20 s on claims): none starts past the budget.
                    if self._out_of_time("column_repair", run, state):
                        break
                    error = current.exec_result.error or ""
                    proposal = repair.propose(current.sql, error) or (
                        state.quotes.propose(current.sql, error) if state.quotes else None
                    )
                    if proposal is None or proposal == current.sql:
                        break
                    (current,) = await run.execute_all(
                        [
                            CandidateSQL(
                                sql=proposal,
                                producer=candidate.producer,
                                rationale=candidate.rationale,
                                lineage=candidate.lineage + ("repair",),
                            )
                        ],
                        agent="column_repair",
                    )
                    last = current
                    if current.exec_result.ok:
                        break
                done[candidate.sql] = last
                if last is not None:
                    state.rewritten.add(candidate.sql)
                run.recorder.decide(
                    "column_repair",
                    "adaptive",
                    generator=candidate.producer,
                    repaired=last is not None and last.exec_result.ok,
                    error=candidate.exec_result.error or "",
                )
            if (last := done[candidate.sql]) is not None:
                out.append(last.model_copy(update={"producer": candidate.producer}))
        return out

    async def _fix(self, run: TaskRun, state: State) -> None:
        """Repair the ``fix_max`` most common errored SQLs; a repair carries its duplicates' votes."""
        counts: dict[str, list[CandidateSQL]] = {}
        for c in fixable(run, state):
            counts.setdefault(c.sql, []).append(c)
        chosen = sorted(counts.values(), key=len, reverse=True)[: self.adaptive.fix_max]
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
        result = await self.tournament.run(
            buckets,
            TournamentQuestion(
                question=task.question, evidence=task.evidence, schema_text=run.light
            ),
            run.runtime,
        )
        if result is None:
            return None
        run.recorder.matches += result.matches
        run.recorder.ranking = result.ranking
        if result.selector_failed:
            run.recorder.decide(
                "selector_failed",
                "tournament",
                degradation=True,
                failed=sum(m.winner is None for m in result.matches),
            )
        return result.winner.representative

    # --- decisions -----------------------------------------------------------------------------

    def _worth(self, step: str, run: TaskRun, state: State) -> bool:
        """Whether an escalation step has anything to work on."""
        if step == "fix":
            return bool(fixable(run, state))
        buckets = self.bucketer.bucket(run.pool)
        if step == "widen":
            largest = max((b.size for b in buckets if not b.error), default=0)
            if largest < self.adaptive.widen_min_votes:
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
        top, a = buckets[0], self.adaptive
        runner_up = buckets[1].size if len(buckets) > 1 and not buckets[1].error else 0
        return (
            top.size > runner_up
            and top.size >= a.stop_min_votes
            and self._share(buckets) >= a.stop_share
        )

    def _may_answer(self, step: str, top: Bucket, run: TaskRun, state: State) -> bool:
        """A clear majority answers unless its SQL rates harder than ``stop_max_hardness`` and a
        widening is still to come: the first wave agrees on wrong answers most on hard questions."""
        a = self.adaptive
        if a.stop_max_hardness == "extra" or not a.widen:
            return True
        if any(cost.step == "widen" for cost in state.steps):
            return True
        hardness = rated_hardness(top.representative.sql)
        if HARDNESS.index(hardness) <= HARDNESS.index(a.stop_max_hardness):
            return True
        run.recorder.decide("adaptive.hard_majority", step, hardness=hardness, votes=top.size)
        return False

    def _out_of_time(self, step: str, run: TaskRun, state: State) -> bool:
        """Past ``escalate_within_s`` since the question started: ``step`` and every later one
        are left out (one decision in the trace)."""
        limit = self.adaptive.escalate_within_s
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
        ) <= self.adaptive.tournament_margin * self._answers(buckets)

    def _vote(self, run: TaskRun, buckets: Sequence[Bucket]) -> CandidateSQL | None:
        """Largest non-error bucket; ties: one with rows before an empty one, then the greedy one's.

        An empty result that most candidates agree on stands: questions whose answer is no rows are
        common, and a lone non-empty SQL beside a large empty bucket is more often the wrong one.
        """
        if not buckets:
            return None
        field = [b for b in buckets if not b.error] or list(buckets)
        greedy = f"{FIRST_WAVE}/greedy"
        ranked = sorted(
            field, key=lambda b: (-b.size, b.empty, greedy not in {c.producer for c in b.members})
        )
        if not run.recorder.ranking:
            run.recorder.ranking = tuple(b.hash for b in ranked)
        return ranked[0].representative
