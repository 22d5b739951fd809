"""The agentic mode: one generated SQL at a time, checked before it runs, classified when it
fails, and repaired with the failure's directive — the orchestrator alone holds the attempts.

    Task ──► catalog(db) ──► select entities (one short call over the catalog; or the schema
             focus's tables, no LLM) ──► entity_schema(chosen): sub-fields, vocabularies, keys
         ──► loop, at most ``max_attempts`` generations:
               generate_sql(schemas, own solved examples, cell values matching the question,
                            cheatsheet rules, question, earlier attempts with their feedback)
                                                                               [tool; sees no rows]
               ──► checker chain: rewriters, then blockers ──► findings?
               ──► plan verifier (optional LLM) ──► objection?
               ──► execute ──► classify (taxonomy) ──► error / empty / NULL-only?
               ──► semantic validator (optional LLM) on the result preview ──► rejection?
               a finding routes by its class's action:
                 expand_schema   ──► the entities that have what was missing join the schema
                 repair_in_place ──► the directive (or, without directives, the raw message)
                                     goes back to the generator with the attempt
                 accept          ──► the answer stands (an empty result can be right; it
                                     goes back once first while attempts remain)
                 stop            ──► no retry can help: answer from what exists
         ──► answer: the accepted attempt; else the best executed one (rows over an empty result
             over an error), executing the blocked SQLs as a last resort; with no rows from any,
             the latest SQL that ran, else the latest written

Every routing is a trace decision (``agentic.<action>``) naming the failure's class and source
(a checker stage, the engine, the verifier, the validator). Findings are recorded in the
database's cheatsheet (pipelines/agentic_mode/cheatsheet.py), marked fixed when the next attempt no
longer meets them; its top rules open every generation.

    pipeline = AgenticPipeline(client=client, sandbox=sandbox, scaling=AgenticScaling())  # a model
    prediction = await pipeline.answer(task)
    prediction.answered_by, [s.step for s in prediction.steps]
    ──► ('attempt_2', ['select_entities', 'generate', 'generate'])
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from models.errors import InvalidModelOutput, ModelError
from pipelines.agentic_mode.attempts import Session, Tried, best_attempt, normal
from pipelines.agentic_mode.chain import CheckerChain
from pipelines.agentic_mode.classify import Classifier
from pipelines.agentic_mode.context import DatabaseContext, hubs_first
from pipelines.agentic_mode.entities import EntitySelector, SelectionInput, entities_for
from pipelines.agentic_mode.generate import (
    Attempt,
    GeneratedSQL,
    GenerationRequest,
    generate_sql,
)
from pipelines.agentic_mode.llm_checks import LLMChecks
from pipelines.agentic_mode.taxonomy import Finding, Taxonomy, load_taxonomy
from pipelines.agents.base import is_fatal
from pipelines.agents.types import Context
from pipelines.contracts import CandidateSQL, CellHit, DatabaseRef, ExampleHit, Task
from pipelines.indexing.examples.own_examples import OwnExampleRetriever
from pipelines.indexing.examples.question_skeleton import SchemaWords
from pipelines.prompt_fit import PromptCut, within_context
from pipelines.repair.registry import build_repairs
from pipelines.schema import introspect
from pipelines.schema.cache import SchemaCache
from pipelines.schema.catalog import schema_graph
from pipelines.schema.catalog.model import UnknownEntity
from pipelines.schema.catalog.views import catalog_of, schemas_of
from pipelines.schema.focus import SchemaFocuser
from pipelines.schema.reference import ReferenceSchema
from pipelines.settings import AgentCall
from pipelines.strategies.agentic_settings import AgenticScaling
from pipelines.strategies.base import Strategy
from pipelines.strategies.retrieval import retrieve
from pipelines.task_run import TaskRun, describe, record_failure

SELECT_STEP, GENERATE_STEP = "select_entities", "generate"


# The skeleton's schema words serve only the other databases' examples, which this mode does
# not retrieve.
NO_SCHEMA_WORDS = SchemaWords(tables=frozenset(), columns=frozenset())


class AgenticPipeline(Strategy[AgenticScaling]):
    """One generation at a time, checked, executed, classified and repaired (module docstring)."""

    Settings = AgenticScaling

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        cheatsheets: Callable[[DatabaseRef], Any] | None = None,
        **parts: Any,
    ) -> None:
        super().__init__(**parts)
        self.own_examples = self.own_examples or OwnExampleRetriever()
        self.taxonomy = taxonomy if taxonomy is not None else load_taxonomy()
        # A database's sheet (render, record) kept elsewhere than the files under the cheatsheet
        # root: a run on object storage keeps them in one Ray actor (eval/sweep/cheatsheets.py).
        self.cheatsheets = cheatsheets
        self.classifier = Classifier(self.taxonomy)
        self.selector = EntitySelector(settings=AgentCall(temperature=0.0, max_tokens=96))
        self.generator_settings = AgentCall(max_tokens=self.settings.single_pass.max_tokens)
        if "focuser" not in parts:  # the focus as an entity picker: on whatever the schema's size
            self.focuser = SchemaFocuser(self.settings.focus.model_copy(update={"above_tokens": 0}))
        self.checks = LLMChecks(
            self.settings.agents,
            self.taxonomy,
            verifier=self.scaling.verifier,
            validator=self.scaling.validator,
        )
        self._databases: SchemaCache[DatabaseContext] = SchemaCache()
        self._references: SchemaCache[ReferenceSchema] = SchemaCache()  # the focus's, on use

    def call_allowance(self) -> int:
        """Upper bound of LLM calls of one question."""
        a = self.scaling
        # a generation, its redraw when it repeats an earlier SQL, and the LLM checks
        per_attempt = 2 + int(a.verifier) + int(a.validator)
        return int(a.select_entities != "focus") + a.max_attempts * per_attempt

    def memo(self) -> Session:
        return Session(entities=[])

    async def conclude_search(
        self, run: TaskRun, session: Session, chosen: CandidateSQL | None
    ) -> CandidateSQL | None:
        """The accepted attempt, else the best one (``best_attempt``); the cheatsheet learns
        the last attempt's findings as not fixed."""
        self._learn(run.task.db, session.pending, fixed=False)
        if chosen is None:
            chosen = await best_attempt(run, session)
        if chosen is not None:
            run.steps.answered_by = run.steps.answered_by or chosen.producer.removeprefix(
                "agentic/"
            )
        run.add([t.candidate for t in session.tried if t.result is not None])
        return chosen

    # --- the loop ------------------------------------------------------------------------------

    async def search(self, run: TaskRun, session: Session) -> CandidateSQL | None:
        a = self.scaling
        task = run.task
        context = await self._database(task.db)
        session.entities = await self._select(run, context)
        retrieved = Context(cell_hits=await self._cells(run), example_hits=self._examples(task))
        run.retrieval = tuple(
            source
            for source, hits in (
                ("cells", retrieved.cell_hits),
                ("examples", retrieved.example_hits),
            )
            if hits
        )
        run.recorder.context = retrieved  # the trace shows what the prompts were given
        for number in range(1, a.max_attempts + 1):
            try:
                tried = await self._attempt(run, session, context, retrieved, number)
            except ModelError as exc:
                if is_fatal(exc):
                    raise
                # The model cannot answer this prompt (it overflows the context, the server is
                # gone): the next one, longer by its history, would fare no better. The attempts
                # so far answer (``best_attempt``).
                record_failure(run, "generate", f"attempt_{number}", exc)
                run.failure = describe(exc)
                break
            if tried is None:
                continue
            self._learn(task.db, session.pending, fixed_by=tried)
            session.pending = tried.findings
            if not tried.findings:
                run.recorder.decide(
                    "agentic.accept", f"attempt_{number}", rows=tried.result.row_count
                )
                run.steps.answered_by = f"attempt_{number}"
                return tried.candidate
            if not await self._route(run, session, context, tried):
                break
        return None

    async def _attempt(
        self,
        run: TaskRun,
        session: Session,
        context: DatabaseContext,
        retrieved: Context,
        number: int,
    ) -> Tried | None:
        """Generate, check, verify, execute, classify and validate one SQL. None: the generator
        gave no SQL (noted in the history, so the next call knows)."""
        a = self.scaling
        task = run.task
        request = GenerationRequest(
            question=task.question,
            evidence=task.evidence,
            dialect=task.db.dialect,
            db_id=task.db.db_id,
            schema_text=schemas_of(context.graph, self._shown(context, session)).text(),
            examples=retrieved.example_hits,
            cells=retrieved.cell_hits,
            rules=self._rules(task.db),
            history=tuple(session.history),
            show_sql=a.show_failed_sql,
            temperature=a.temperature if number == 1 else a.repair_temperature,
        )
        run.steps.open(GENERATE_STEP)
        try:
            generated = await self._generate(run, request, number)
            if normal(generated.sql) in {normal(t.sql) for t in session.tried}:
                # A small model given its failed SQL often writes it again: draw another one.
                run.recorder.decide("agentic.duplicate", f"attempt_{number}")
                request = request.model_copy(
                    update={"temperature": a.duplicate_temperature, "seed": number}
                )
                generated = await self._generate(run, request, number)
        except (InvalidModelOutput, ValueError) as exc:
            record_failure(run, "generate", f"attempt_{number}", exc)
            session.history.append(
                Attempt(sql="(none)", feedback=("The reply held no SQL query in a ```sql block.",))
            )
            return None
        finally:
            run.steps.close()
        tried = Tried(number=number, sql=generated.sql)
        session.tried.append(tried)
        checked = context.chain.check(tried.sql)
        for rewrite in checked.rewrites:
            run.recorder.decide("agentic.rewrite", f"attempt_{number}", rewriter=rewrite.stage)
        tried.sql, tried.findings = checked.sql, checked.findings
        if tried.findings:
            return tried
        if self.checks.verifier is not None:
            objection = await self.checks.verify(run, request, tried.sql, number)
            if objection is not None:
                tried.findings = (objection,)
                return tried
        tried.result = await run.runtime.execute(tried.sql, task.db, agent="agentic")
        found = self.classifier.classify_result(tried.result, task.db.dialect)
        if found is not None and (found.action != "accept" or self._retry_empty(session, number)):
            tried.findings = (found,)
            return tried
        if self.checks.validator is not None and tried.result.ok:
            rejection = await self.checks.validate(run, tried, number)
            if rejection is not None:
                tried.findings, tried.rejected = (rejection,), True
        return tried

    async def _generate(
        self, run: TaskRun, request: GenerationRequest, number: int
    ) -> GeneratedSQL:
        """``generate_sql`` within the model's context: a prompt refused for length goes again
        without its solved examples and cell values (help; the schema and the history are what
        the question needs), and so does every later attempt of the question."""

        async def send(cut: PromptCut) -> GeneratedSQL:
            asked = (
                request if cut.help else request.model_copy(update={"examples": (), "cells": ()})
            )
            return await generate_sql(asked, run.runtime, settings=self.generator_settings)

        helps = bool(request.examples or request.cells)
        return await within_context(run, send, stage=f"attempt_{number}", helps=helps)

    async def _route(
        self, run: TaskRun, session: Session, context: DatabaseContext, tried: Tried
    ) -> bool:
        """Act on the attempt's findings; False when no retry can help."""
        a = self.scaling
        stage = f"attempt_{tried.number}"
        first = tried.findings[0]
        if any(f.action == "stop" for f in tried.findings):
            run.recorder.decide(
                "agentic.stop", stage, error_class=first.error_class, source=first.source
            )
            return False
        feedback = [self._feedback(f, tried) for f in tried.findings]
        added: list[str] = []
        if a.schema_expansion:
            for finding in tried.findings:
                if finding.action == "expand_schema":
                    added += self._expand(session, context, finding)
        if added:
            feedback.append(f"The schema now also shows {', '.join(added)}.")
        for finding in tried.findings:
            action = (
                "expand_schema"
                if added and finding.action == "expand_schema"
                else "repair_in_place"
            )
            run.recorder.decide(
                f"agentic.{action}",
                stage,
                error_class=finding.error_class,
                phase=finding.phase,
                source=finding.source,
                identifier=finding.identifier,
                added=",".join(added),
            )
        session.history.append(Attempt(sql=tried.sql, feedback=tuple(feedback)))
        return True

    def _retry_empty(self, session: Session, number: int) -> bool:
        """Whether an empty result goes back for a repair: once a question, attempts left."""
        a = self.scaling
        if not a.retry_empty or number >= a.max_attempts or session.retried_empty:
            return False
        session.retried_empty = True
        return True

    def _feedback(self, finding: Finding, tried: Tried) -> str:
        if self.scaling.directives:
            return finding.feedback()
        # The plain retry baseline: what the engine or the check said, nothing more.
        if tried.result is not None and tried.result.error:
            return tried.result.error.strip().splitlines()[0]
        return finding.detail

    def _expand(self, session: Session, context: DatabaseContext, finding: Finding) -> list[str]:
        room = self.scaling.max_expanded - session.expanded
        new = [e for e in entities_for(finding, context.graph) if e not in session.entities]
        new = new[: max(0, room)]
        session.entities += new
        session.expanded += len(new)
        return new

    # --- the context ---------------------------------------------------------------------------

    async def _database(self, db: DatabaseRef) -> DatabaseContext:
        async def read() -> DatabaseContext:
            graph = await asyncio.to_thread(schema_graph, db, self.settings.catalog)
            view = await asyncio.to_thread(introspect, db, 0)
            chain = CheckerChain(
                view, stages=build_repairs(self.scaling.checks), taxonomy=self.taxonomy
            )
            catalog = catalog_of(graph, self.settings.catalog).text()
            return DatabaseContext(graph, catalog, chain, hubs_first(graph))

        return await self.once_per_database(self._databases, db, read)

    async def _select(self, run: TaskRun, context: DatabaseContext) -> list[str]:
        """The entities the first generation is shown, hubs first (``hubs_first``)."""
        a = self.scaling
        task = run.task
        names = tuple(e.name for e in context.graph.entities)
        if len(names) <= a.max_entities:
            return list(names)
        picked: list[str] = []
        if a.select_entities in ("llm", "both"):
            run.steps.open(SELECT_STEP)
            try:
                picked += await self.selector.run(
                    SelectionInput(
                        question=task.question,
                        evidence=task.evidence,
                        catalog=context.catalog,
                        names=names,
                        limit=a.max_entities,
                    ),
                    run.runtime,
                )
            except Exception as exc:  # noqa: BLE001 - the focus's pick stands in
                if is_fatal(exc):
                    raise
                record_failure(run, "select_entities", SELECT_STEP, exc)
            finally:
                run.steps.close()
        if a.select_entities in ("focus", "both") or not picked:
            picked += await self._focus(task, context)
        chosen = set(picked)
        ordered = [n for n in context.order if n in chosen]
        run.recorder.decide("agentic.entities", SELECT_STEP, entities=",".join(ordered))
        return ordered

    async def _focus(self, task: Task, context: DatabaseContext) -> list[str]:
        reference = await self._references.get(  # read once per database
            task.db, lambda: self.focused_reference(task.db, self.focuser, sample_rows=0)
        )
        focused = self.focuser.focus(task.db, reference, task.question, task.evidence)
        found: list[str] = []
        for table in focused.tables:
            try:
                found += [e.name for e in context.graph.find([table])]
            except UnknownEntity:  # a table the graph does not know is skipped
                continue
        return found

    def _shown(self, context: DatabaseContext, session: Session) -> list[str]:
        return [name for name in context.order if name in session.entities]

    async def _cells(self, run: TaskRun) -> tuple[CellHit, ...]:
        """The database values that match n-grams of the question, as the adaptive pipeline
        retrieves them (no LLM); none without a cell index."""
        if self.cell_retriever is None:
            return ()
        context, _ = await retrieve(
            run,
            NO_SCHEMA_WORDS,
            self.settings.understanding,
            cell_retriever=self.cell_retriever,
            example_retriever=None,
        )
        return context.cell_hits

    def _examples(self, task: Task) -> tuple[ExampleHit, ...]:
        if not self.scaling.examples:
            return ()
        return tuple(self.own_examples.search(task.db, task.question, k=self.scaling.examples))

    # --- the cheatsheet ------------------------------------------------------------------------

    def _cheatsheet(self, db: DatabaseRef):  # noqa: ANN202 - Cheatsheet | None
        if not self.scaling.cheatsheet or self.settings.cheatsheet.root is None:
            return None
        if self.cheatsheets is not None:
            return self.cheatsheets(db)
        from pipelines.agentic_mode.cheatsheet import Cheatsheet

        return Cheatsheet.open(self.settings.cheatsheet, db, self.taxonomy)

    def _rules(self, db: DatabaseRef) -> str:
        sheet = self._cheatsheet(db)
        return sheet.render() if sheet is not None else ""

    def _learn(
        self,
        db: DatabaseRef,
        findings: Sequence[Finding],
        *,
        fixed: bool | None = None,
        fixed_by: Tried | None = None,
    ) -> None:
        """Record the previous attempt's findings, fixed when ``fixed_by`` no longer meets them."""
        sheet = self._cheatsheet(db) if findings else None
        if sheet is None:
            return
        still = {(f.error_class, f.identifier) for f in (fixed_by.findings if fixed_by else ())}
        for finding in findings:
            was_fixed = (
                fixed
                if fixed is not None
                else (finding.error_class, finding.identifier) not in still
            )
            sheet.record(finding, fixed=was_fixed)
