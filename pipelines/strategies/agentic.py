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
database's cheatsheet (pipelines/agentic/cheatsheet.py), marked fixed when the next attempt no
longer meets them; its top rules open every generation.

    pipeline = AgenticPipeline(client=client, sandbox=sandbox, scaling=scaling)  # client: a model
    prediction = await pipeline.answer(task)
    prediction.answered_by, [s.step for s in prediction.steps]
    ──► ('attempt_2', ['select_entities', 'generate', 'generate'])
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from models.errors import InvalidModelOutput, ModelError
from pipelines.agentic.chain import CheckerChain
from pipelines.agentic.checks import stages
from pipelines.agentic.classify import Classifier
from pipelines.agentic.entities import EntitySelector, SelectionInput, entities_for
from pipelines.agentic.generate import Attempt, GenerationRequest, generate_sql
from pipelines.agentic.taxonomy import Finding, Taxonomy, load_taxonomy
from pipelines.agents.base import is_fatal
from pipelines.agents.runtime import ModelClientLike
from pipelines.agents.types import Context
from pipelines.contracts import (
    AgenticScaling,
    CandidateSQL,
    CellHit,
    DatabaseRef,
    ExampleHit,
    ExecutionResult,
    Prediction,
    ScalingSettings,
    Task,
)
from pipelines.database_rules import settle
from pipelines.indexing.examples.own_examples import OwnExampleRetriever
from pipelines.indexing.examples.question_skeleton import SchemaWords
from pipelines.schema import introspect
from pipelines.schema.cache import SchemaCache
from pipelines.schema.catalog import schema_graph
from pipelines.schema.catalog.model import SchemaGraph, UnknownEntity
from pipelines.schema.catalog.views import catalog_of, schemas_of
from pipelines.schema.focus import SchemaFocuser
from pipelines.schema.reference import ReferenceSchema, SchemaReadError, reference_schema
from pipelines.settings import AgentCall, PipelineSettings
from pipelines.strategies.adaptive_retrieval import retrieve
from pipelines.strategies.adaptive_state import State
from pipelines.strategies.base import Strategy
from pipelines.task_run import TaskRun, describe, record_failure, within_limits
from pipelines.trace import ReasoningTrace, TraceSink

SELECT_STEP, GENERATE_STEP, VERIFY_STEP, VALIDATE_STEP = (
    "select_entities",
    "generate",
    "verify",
    "validate",
)


# The skeleton's schema words serve only the other databases' examples, which this mode does
# not retrieve.
NO_SCHEMA_WORDS = SchemaWords(tables=frozenset(), columns=frozenset())


def _normal(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").lower()


def call_allowance(agentic: AgenticScaling) -> int:
    """Upper bound of LLM calls of one question."""
    # a generation, its redraw when it repeats an earlier SQL, and the LLM checks
    per_attempt = 2 + int(agentic.verifier) + int(agentic.validator)
    return int(agentic.select_entities != "focus") + agentic.max_attempts * per_attempt


class DatabaseContext(NamedTuple):
    """What the orchestrator reads of a database once: its knowledge graph, the catalog's text,
    the checker chain over the whole schema (a name the generator was not shown but the
    database has is a coverage gap, not an unknown name), and the order entities are shown in."""

    graph: SchemaGraph
    catalog: str
    chain: CheckerChain
    order: tuple[str, ...]


def hubs_first(graph: SchemaGraph) -> tuple[str, ...]:
    """Entity names, those joined to the most others first (then the larger first): the
    entities most questions need open every prompt, so prompts of different questions share
    their longest prefix and the model server's KV cache serves it."""
    partners: dict[str, set[str]] = {e.name: set() for e in graph.entities}
    for join in graph.joins:
        if join.entity != join.ref_entity:
            partners[join.entity].add(join.ref_entity)
            partners[join.ref_entity].add(join.entity)
    ranked = sorted(graph.entities, key=lambda e: (-len(partners[e.name]), -(e.rows or 0)))
    return tuple(e.name for e in ranked)


@dataclass
class Tried:
    """One attempt: its (rewritten) SQL, where it got, and what was found wrong."""

    number: int
    sql: str
    result: ExecutionResult | None = None  # None: blocked before execution
    findings: tuple[Finding, ...] = ()
    rejected: bool = False  # executed, then refused by the validator

    @property
    def candidate(self) -> CandidateSQL:
        return CandidateSQL(
            sql=self.sql,
            producer=f"agentic/attempt_{self.number}",
            exec_result=self.result,
            lineage=("gen",) if self.number == 1 else ("gen", f"repair:{self.number - 1}"),
        )


@dataclass
class Session:
    """The orchestrator's memory of one question."""

    entities: list[str]
    expanded: int = 0
    tried: list[Tried] = field(default_factory=list)
    history: list[Attempt] = field(default_factory=list)
    pending: tuple[Finding, ...] = ()  # last attempt's findings, for the cheatsheet
    retried_empty: bool = False
    failure: str | None = None  # the model error that ended the attempts


class AgenticPipeline(Strategy):
    """One generation at a time, checked, executed, classified and repaired (module docstring)."""

    def __init__(
        self,
        *,
        client: ModelClientLike,
        sandbox: object,
        scaling: ScalingSettings,
        settings: PipelineSettings = PipelineSettings(),
        sinks: Sequence[TraceSink] = (),
        model_name: str = "",
        own_examples: OwnExampleRetriever | None = None,
        taxonomy: Taxonomy | None = None,
        focuser: SchemaFocuser | None = None,
        cell_retriever: object | None = None,
    ) -> None:
        if scaling.agentic is None:
            raise ValueError(
                "scaling.agentic is not set: use build_pipeline, which picks the pipeline"
            )
        settings, scaling, _ = settle(settings, scaling, None)  # built alone: see settle
        super().__init__(
            client=client, sandbox=sandbox, scaling=scaling, sinks=sinks, model_name=model_name
        )
        self.agentic = scaling.agentic
        self.settings = settings
        self.own_examples = own_examples or OwnExampleRetriever()
        self.cell_retriever = cell_retriever  # L0 cell index; None: no values in the prompt
        self.taxonomy = taxonomy if taxonomy is not None else load_taxonomy()
        self.classifier = Classifier(self.taxonomy)
        self.selector = EntitySelector(settings=AgentCall(temperature=0.0, max_tokens=96))
        self.generator_settings = AgentCall(max_tokens=settings.single_pass.max_tokens)
        # The focus as an entity picker: always on, whatever the schema's size.
        self.focuser = focuser or SchemaFocuser(
            settings.focus.model_copy(update={"above_tokens": 0})
        )
        self.verifier, self.validator = self._checkers()
        self._databases: SchemaCache[DatabaseContext] = SchemaCache()
        self._references: SchemaCache[ReferenceSchema] = SchemaCache()  # the focus's, on use

    def _checkers(self) -> tuple[object | None, object | None]:
        verifier = validator = None
        if self.agentic.verifier:
            from pipelines.agentic.verifier import PlanVerifier

            verifier = PlanVerifier(settings=self.settings.agents.verifier)
        if self.agentic.validator:
            from pipelines.agentic.validator import SemanticValidator

            validator = SemanticValidator(settings=self.settings.agents.validator)
        return verifier, validator

    # --- public API ----------------------------------------------------------------------------

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]:
        run = TaskRun.start(
            task,
            client=self.client,
            executor=self.executor,
            scaling=self.scaling,
            call_cap=call_allowance(self.agentic),
            model_name=self.model_name,
        )
        state = State()
        session = Session(entities=[])
        chosen: CandidateSQL | None = None
        failure: str | None = None
        try:
            chosen = await within_limits(run, "agentic", self._orchestrate(run, state, session))
        except SchemaReadError as exc:
            failure = f"cannot read the schema of {task.db.db_id}: {exc}"
        failure = failure or session.failure
        state.close_step(run.runtime)
        self._learn(task.db, session.pending, fixed=False)
        if chosen is None:
            chosen = await self._fallback(run, session)
        if chosen is not None:
            state.answered_by = state.answered_by or chosen.producer.removeprefix("agentic/")
        run.add([t.candidate for t in session.tried if t.result is not None])
        return run.conclude(
            self.sinks,
            chosen=chosen,
            failure=failure,
            answered_by=state.answered_by if chosen else "",
            steps=tuple(state.steps),
            retrieval=state.retrieval,
        )

    # --- the loop ------------------------------------------------------------------------------

    async def _orchestrate(
        self, run: TaskRun, state: State, session: Session
    ) -> CandidateSQL | None:
        a = self.agentic
        task = run.task
        context = await self._database(task.db)
        session.entities = await self._select(run, state, context)
        retrieved = Context(cell_hits=await self._cells(run), example_hits=self._examples(task))
        state.retrieval = tuple(
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
                tried = await self._attempt(run, state, session, context, retrieved, number)
            except ModelError as exc:
                if is_fatal(exc):
                    raise
                # The model cannot answer this prompt (it overflows the context, the server is
                # gone): the next one, longer by its history, would fare no better. The attempts
                # so far answer (``_fallback``).
                record_failure(run, "generate", f"attempt_{number}", exc)
                session.failure = describe(exc)
                break
            if tried is None:
                continue
            self._learn(task.db, session.pending, fixed_by=tried)
            session.pending = tried.findings
            if not tried.findings:
                run.recorder.decide(
                    "agentic.accept", f"attempt_{number}", rows=tried.result.row_count
                )
                state.answered_by = f"attempt_{number}"
                return tried.candidate
            if not await self._route(run, session, context, tried):
                break
        return None

    async def _attempt(
        self,
        run: TaskRun,
        state: State,
        session: Session,
        context: DatabaseContext,
        retrieved: Context,
        number: int,
    ) -> Tried | None:
        """Generate, check, verify, execute, classify and validate one SQL. None: the generator
        gave no SQL (noted in the history, so the next call knows)."""
        a = self.agentic
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
        state.open_step(GENERATE_STEP, run.runtime)
        try:
            generated = await generate_sql(request, run.runtime, settings=self.generator_settings)
            if _normal(generated.sql) in {_normal(t.sql) for t in session.tried}:
                # A small model given its failed SQL often writes it again: draw another one.
                run.recorder.decide("agentic.duplicate", f"attempt_{number}")
                request = request.model_copy(
                    update={"temperature": a.duplicate_temperature, "seed": number}
                )
                generated = await generate_sql(
                    request, run.runtime, settings=self.generator_settings
                )
        except (InvalidModelOutput, ValueError) as exc:
            record_failure(run, "generate", f"attempt_{number}", exc)
            session.history.append(
                Attempt(sql="(none)", feedback=("The reply held no SQL query in a ```sql block.",))
            )
            return None
        finally:
            state.close_step(run.runtime)
        tried = Tried(number=number, sql=generated.sql)
        session.tried.append(tried)
        if a.checker_chain:
            checked = context.chain.check(tried.sql)
            for rewrite in checked.rewrites:
                run.recorder.decide("agentic.rewrite", f"attempt_{number}", rewriter=rewrite.stage)
            tried.sql, tried.findings = checked.sql, checked.findings
            if tried.findings:
                return tried
        if self.verifier is not None:
            objection = await self._verify(run, state, request, tried.sql, number)
            if objection is not None:
                tried.findings = (objection,)
                return tried
        tried.result = await run.runtime.execute(tried.sql, task.db, agent="agentic")
        found = self.classifier.classify_result(tried.result, task.db.dialect)
        if found is not None and (found.action != "accept" or self._retry_empty(session, number)):
            tried.findings = (found,)
            return tried
        if self.validator is not None and tried.result.ok:
            rejection = await self._validate(run, state, tried, number)
            if rejection is not None:
                tried.findings, tried.rejected = (rejection,), True
        return tried

    async def _route(
        self, run: TaskRun, session: Session, context: DatabaseContext, tried: Tried
    ) -> bool:
        """Act on the attempt's findings; False when no retry can help."""
        a = self.agentic
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
        a = self.agentic
        if not a.retry_empty or number >= a.max_attempts or session.retried_empty:
            return False
        session.retried_empty = True
        return True

    def _feedback(self, finding: Finding, tried: Tried) -> str:
        if self.agentic.directives:
            return finding.feedback()
        # The plain retry baseline: what the engine or the check said, nothing more.
        if tried.result is not None and tried.result.error:
            return tried.result.error.strip().splitlines()[0]
        return finding.detail

    def _expand(self, session: Session, context: DatabaseContext, finding: Finding) -> list[str]:
        room = self.agentic.max_expanded - session.expanded
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
                view, stages=stages(bind_columns=self.agentic.bind_columns), taxonomy=self.taxonomy
            )
            catalog = catalog_of(graph, self.settings.catalog).text()
            return DatabaseContext(graph, catalog, chain, hubs_first(graph))

        try:
            return await self._databases.get(db, read)
        except SchemaReadError:
            raise
        except Exception as exc:  # noqa: BLE001 - this task fails alone
            raise SchemaReadError(describe(exc)) from exc

    async def _select(self, run: TaskRun, state: State, context: DatabaseContext) -> list[str]:
        """The entities the first generation is shown, hubs first (``hubs_first``)."""
        a = self.agentic
        task = run.task
        names = tuple(e.name for e in context.graph.entities)
        if len(names) <= a.max_entities:
            return list(names)
        picked: list[str] = []
        if a.select_entities in ("llm", "both"):
            state.open_step(SELECT_STEP, run.runtime)
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
                state.close_step(run.runtime)
        if a.select_entities in ("focus", "both") or not picked:
            picked += await self._focus(task, context)
        chosen = set(picked)
        ordered = [n for n in context.order if n in chosen]
        run.recorder.decide("agentic.entities", SELECT_STEP, entities=",".join(ordered))
        return ordered

    async def _focus(self, task: Task, context: DatabaseContext) -> list[str]:
        async def read() -> ReferenceSchema:
            reference = await reference_schema(
                self.executor,
                task.db,
                sample_rows=0,
                column_notes=self.settings.single_pass.column_notes,
            )
            await self.focuser.prepare(task.db, reference)
            return reference

        reference = await self._references.get(task.db, read)  # read once per database
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
        if not self.agentic.examples:
            return ()
        return tuple(self.own_examples.search(task.db, task.question, k=self.agentic.examples))

    # --- the cheatsheet ------------------------------------------------------------------------

    def _cheatsheet(self, db: DatabaseRef):  # noqa: ANN202 - Cheatsheet | None
        if not self.agentic.cheatsheet or self.settings.cheatsheet.root is None:
            return None
        from pipelines.agentic.cheatsheet import Cheatsheet

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

    # --- the LLM checks ------------------------------------------------------------------------

    async def _verify(
        self, run: TaskRun, state: State, request: GenerationRequest, sql: str, number: int
    ) -> Finding | None:
        from pipelines.agentic.verifier import PlanInput

        check = PlanInput(
            question=request.question,
            evidence=request.evidence,
            dialect=request.dialect,
            schema_text=request.schema_text,
            sql=sql,
        )
        return await self._ask(run, state, self.verifier, check, VERIFY_STEP, number)

    async def _validate(
        self, run: TaskRun, state: State, tried: Tried, number: int
    ) -> Finding | None:
        from pipelines.agentic.validator import ValidationInput

        assert tried.result is not None
        check = ValidationInput(
            question=run.task.question,
            evidence=run.task.evidence,
            sql=tried.sql,
            result=tried.result,
        )
        return await self._ask(run, state, self.validator, check, VALIDATE_STEP, number)

    async def _ask(
        self,
        run: TaskRun,
        state: State,
        agent,
        check,
        step: str,
        number: int,  # noqa: ANN001
    ) -> Finding | None:
        """One LLM check as its own step: its verdict's finding, None for no objection (an
        unusable verdict included, recorded as ``<step>_unusable``)."""
        state.open_step(step, run.runtime)
        try:
            verdict = await agent.run(check, run.runtime)
        except Exception as exc:  # noqa: BLE001 - an unusable verdict is no objection
            if is_fatal(exc):
                raise
            record_failure(run, step, f"attempt_{number}", exc)
            return None
        finally:
            state.close_step(run.runtime)
        return verdict.finding(self.taxonomy)

    # --- the answer when none was accepted -------------------------------------------------------

    async def _fallback(self, run: TaskRun, session: Session) -> CandidateSQL | None:
        """The best attempt: rows the validator did not refuse, then rows, then an empty result,
        latest first; with none executed, the blocked SQLs are run, latest first, until one
        returns rows (a blocker may be wrong, and an answer beats none)."""
        executed = [t for t in reversed(session.tried) if t.result is not None and t.result.ok]
        for good in (
            lambda t: t.result.row_count > 0 and not t.rejected,
            lambda t: t.result.row_count > 0,
            lambda t: True,
        ):
            for tried in executed:
                if good(tried):
                    run.recorder.decide("agentic.fallback", f"attempt_{tried.number}")
                    return tried.candidate
        for tried in reversed(session.tried):
            if tried.result is not None:
                continue
            tried.result = await run.runtime.execute(tried.sql, run.task.db, agent="agentic")
            if tried.result.ok and tried.result.row_count > 0:
                run.recorder.decide("agentic.fallback_blocked", f"attempt_{tried.number}")
                return tried.candidate
        # Nothing returned rows: the latest SQL that ran, else the latest at all — an answer to
        # score and show, as single pass would give, rather than none.
        ran = [t for t in reversed(session.tried) if t.result is not None and t.result.ok]
        last = (ran or list(reversed(session.tried)) or [None])[0]
        if last is not None:
            run.recorder.decide("agentic.fallback_last", f"attempt_{last.number}")
            return last.candidate
        return None
