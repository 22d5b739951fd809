"""The test-time-compute pipeline. The only module that knows widths, loop caps and depths.

    Task ──► schema views (light, DDL) ──► L1: extractor ──► CellRetriever ║ ExampleRetriever
         ──► [router: probe wave ──► agree? stop early : escalate]
         ──► L2 synthesis: ReasoningGenerator ×k_reasoning ║ ICLGenerator{strategies} ×k_icl
             (diverse temperatures) ──► every candidate executed at once
         ──► refinement round:
               SQLFixer on errors (≤ fixer_max_passes, sees its generator's earlier fixes)
               × refinement_max_passes: bucket ──► CritiqueAgent per new non-error bucket
                   (verdict forced to retry when complexity ≥ threshold) ──► SQLRevisor on edits
             re-synthesis with a LessonsBlock when a verdict is retry, or nothing was accepted and
             an error_class is shared by ≥ 2 buckets (≤ resynth_max_passes, k_resynth per generator)
         ──► L3 tournament (or majority vote) ──► Prediction + ReasoningTrace

Degradation (each fires a DecisionEvent): extractor → empty Understanding; retriever → no hits;
one generator → the others; fixer/critic/revisor → that step skipped; selector → majority vote;
budget or global timeout → best candidate so far, ``degraded=True``. Zero candidates is the only
hard failure (``Prediction.error``).

    >>> pipeline = Orchestrator(client=client, sandbox=sandbox, scaling=ScalingConfig())  # doctest: +SKIP
    >>> prediction = await pipeline.answer(task)                                          # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import inspect
import re
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from math import comb

from models.budget import TokenBudget
from models.errors import BudgetExceeded
from pipelines.agents.base import GenerationInput, SqlGenerator, is_fatal
from pipelines.agents.critique_agent import CritiqueAgent, CritiqueInput
from pipelines.agents.errors import CallCapExceeded
from pipelines.agents.icl import STRATEGIES
from pipelines.agents.icl_generator import ICLGenerator
from pipelines.agents.keyword_extractor import KeywordSkeletonExtractor
from pipelines.agents.reasoning_generator import ReasoningGenerator
from pipelines.agents.reasoning_selector import ReasoningSelector
from pipelines.agents.render import clip, preview
from pipelines.agents.runtime import AgentRuntime, ModelClientLike, as_executor
from pipelines.agents.sql_fixer import FixInput, SQLFixer
from pipelines.agents.sql_revisor import RevisionInput, SQLRevisor
from pipelines.agents.types import (
    ALL_GENERATORS,
    Bucket,
    Context,
    Critique,
    FixAttempt,
    Lesson,
    LessonsBlock,
    RevisionDelta,
    Understanding,
    family_of,
)
from pipelines.bucketing import ExecutionBucketer
from pipelines.contracts import CandidateSQL, CellHit, ExampleHit, Prediction, ScalingConfig, SchemaView, Task
from pipelines.router import DifficultyRouter
from pipelines.schema import introspect, render_ddl, render_light, restrict, token_size
from pipelines.settings import PipelineSettings
from pipelines.trace import ReasoningTrace, RouteRecord, SafeSink, TraceRecorder, TraceSink, location, safe_sinks
from pipelines.tournament import Tournament, TournamentQuestion, finalists, majority_vote

FAMILY_ORDER = ("reasoning", "icl/direct", "icl/cot", "icl/decompose")
UNFIXABLE_ERRORS = {"database_unavailable"}


# --- widths, depths and the call allowance -------------------------------------------------------


@dataclass(frozen=True)
class GenJob:
    """One sample to draw: generator family, sample index within it, temperature."""

    family: str
    index: int
    temperature: float


def families(scaling: ScalingConfig) -> tuple[str, ...]:
    icl = tuple(f"icl/{s}" for s in scaling.icl_strategies) if scaling.k_icl else ()
    return (("reasoning",) if scaling.k_reasoning else ()) + icl


def _temperature(scaling: ScalingConfig, family: str, index: int) -> float:
    # Offset by family so that low k still spreads every temperature across the pool.
    temps = scaling.temperatures
    return temps[(FAMILY_ORDER.index(family) + index) % len(temps)]


def synthesis_jobs(scaling: ScalingConfig, k_reasoning: int | None = None, k_icl: int | None = None,
                   strategies: Sequence[str] | None = None) -> list[GenJob]:
    k_r = scaling.k_reasoning if k_reasoning is None else min(k_reasoning, scaling.k_reasoning)
    k_i = scaling.k_icl if k_icl is None else min(k_icl, scaling.k_icl)
    allowed = scaling.icl_strategies if strategies is None else [s for s in strategies if s in scaling.icl_strategies]
    plan = [("reasoning", k_r)] + [(f"icl/{s}", k_i) for s in allowed]
    return [GenJob(f, i, _temperature(scaling, f, i)) for f, k in plan for i in range(k)]


def resynthesis_jobs(scaling: ScalingConfig, pass_no: int) -> list[GenJob]:
    k = scaling.effective_k_resynth
    return [
        GenJob(f, i, scaling.temperatures[(FAMILY_ORDER.index(f) + pass_no + i) % len(scaling.temperatures)])
        for f in families(scaling)
        for i in range(k)
    ]


def call_allowance(scaling: ScalingConfig, *, first_wave: int, max_finalists: int, extractor: bool = True) -> int:
    """Upper bound of LLM calls one task may make under ``scaling``.

    generated G = first wave + resynth passes × k_resynth × generators; each generated candidate
    may be fixed ``fixer_max_passes`` times; each refinement pass critiques and revises at most
    one bucket per candidate; the tournament plays every pair of at most ``max_finalists``.
    """
    generated = first_wave + scaling.resynth_max_passes * scaling.effective_k_resynth * len(families(scaling))
    refinement = 2 * generated * scaling.refinement_max_passes
    pool = generated * (1 + scaling.refinement_max_passes)
    tournament = comb(min(max_finalists, pool), 2) if scaling.tournament_enabled else 0
    return int(extractor) + generated * (1 + scaling.fixer_max_passes) + refinement + tournament


# --- per-task state --------------------------------------------------------------------------


@dataclass
class _Run:
    task: Task
    recorder: TraceRecorder
    runtime: AgentRuntime
    scaling: ScalingConfig
    light: str = ""
    ddl: str = ""
    context: Context = Context()
    pool: list[CandidateSQL] = field(default_factory=list)
    critiques: dict[str, Critique] = field(default_factory=dict)
    lessons: LessonsBlock = LessonsBlock()

    def add(self, candidates: Sequence[CandidateSQL]) -> None:
        self.pool += candidates
        self.recorder.candidates += candidates


class Orchestrator:
    """The full pipeline; ``answer(task) -> Prediction``, ``answer_with_trace`` for both."""

    def __init__(
        self,
        *,
        client: ModelClientLike,
        sandbox: object,
        scaling: ScalingConfig = ScalingConfig(),
        settings: PipelineSettings = PipelineSettings(),
        cell_retriever: object | None = None,
        example_retriever: object | None = None,
        sinks: Sequence[TraceSink] = (),
        model_name: str = "",
    ) -> None:
        if scaling.single_pass:
            raise ValueError("scaling.single_pass is set: use SinglePassPipeline (build_pipeline does)")
        unknown = set(scaling.icl_strategies) - STRATEGIES.keys()
        if unknown:
            raise ValueError(f"unknown ICL strategies {sorted(unknown)}; known: {sorted(STRATEGIES)}")
        self.client = client
        self.executor = as_executor(sandbox)
        self.scaling = scaling
        self.settings = settings
        self.cell_retriever = cell_retriever
        self.example_retriever = example_retriever
        self.sinks: tuple[SafeSink, ...] = safe_sinks(sinks)
        self.model_name = model_name
        agents = settings.agents
        self.extractor = KeywordSkeletonExtractor(settings=agents.extractor)
        self.generators: dict[str, SqlGenerator] = {"reasoning": ReasoningGenerator(settings=agents.reasoning)}
        for name, strategy in STRATEGIES.items():
            self.generators[f"icl/{name}"] = ICLGenerator(
                strategy=strategy, settings=agents.icl, examples_in_prompt=settings.understanding.examples_in_prompt
            )
        self.fixer = SQLFixer(settings=agents.fixer)
        self.critic = CritiqueAgent(settings=agents.critic)
        self.revisor = SQLRevisor(settings=agents.revisor)
        self.tournament = Tournament(ReasoningSelector(settings=agents.selector), settings.tournament)
        self.router = DifficultyRouter(settings.router)
        self.bucketer = ExecutionBucketer()
        self._views: dict[tuple[str, str], asyncio.Future[SchemaView]] = {}

    # --- public API ----------------------------------------------------------------------------

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
            call_cap=self._allowance(self.scaling, synthesis_jobs(self.scaling)),
            model_name=self.model_name,
        )
        run = _Run(task=task, recorder=recorder, runtime=runtime, scaling=self.scaling)
        chosen: CandidateSQL | None = None
        failure: str | None = None
        try:
            async with asyncio.timeout(self.scaling.global_timeout_s):
                chosen = await self._search(run)
        except TimeoutError:
            recorder.decide("global_timeout", "orchestrator", degradation=True,
                            limit_s=self.scaling.global_timeout_s, candidates=len(run.pool))
        except (BudgetExceeded, CallCapExceeded) as exc:
            recorder.decide("budget_exceeded", "orchestrator", degradation=True, reason=str(exc),
                            tokens=runtime.usage.total_tokens, calls=runtime.calls)
        except _NoSchema as exc:
            failure = str(exc)
        if chosen is None:
            chosen = self._best_so_far(run)
        degradations = tuple(d.label for d in recorder.decisions if d.degradation)
        prediction = Prediction(
            task_id=task.task_id,
            sql=chosen.sql if chosen else "",
            producer=chosen.producer if chosen else "",
            exec_result=chosen.exec_result if chosen else None,
            candidates=tuple(run.pool),
            usage=runtime.usage,
            latency_s=time.monotonic() - started,
            degraded=bool(degradations),
            degradation_reasons=degradations,
            error=None if chosen else (failure or "no candidate SQL was produced"),
            trace_path=location(self.sinks, task.task_id),
        )
        trace = recorder.freeze(prediction, gold_sql=task.gold_sql)
        for sink in self.sinks:
            sink.write(trace)
        return prediction, trace

    async def aclose(self) -> None:
        for sink in self.sinks:
            sink.close()

    # --- the search ----------------------------------------------------------------------------

    async def _search(self, run: _Run) -> CandidateSQL | None:
        view = await self._view(run.task)
        run.context = await self._understand(run)
        run.recorder.context = run.context
        focused = self._focus(view, run)
        run.light, run.ddl = render_light(focused), render_ddl(focused)

        jobs = synthesis_jobs(run.scaling)
        carried: list[CandidateSQL] = []
        if run.scaling.router_enabled:
            early, carried, done = await self._route(run, view)
            if early is not None:
                return early
            jobs = [j for j in synthesis_jobs(run.scaling) if (j.family, j.index) not in done]
        new = carried + await self._synthesize(run, jobs, lineage=("gen",))
        round_critiques = await self._refinement_round(run, new)
        for pass_no in range(1, run.scaling.resynth_max_passes + 1):
            if not self._resynthesis_needed(run, round_critiques):
                break
            run.lessons = _merge_lessons(run.lessons, _lessons_from(round_critiques, run))
            run.recorder.lessons.append(run.lessons)
            new = await self._synthesize(run, resynthesis_jobs(run.scaling, pass_no),
                                         lineage=("gen", f"resynth:{pass_no}"))
            round_critiques = await self._refinement_round(run, new)
        return await self._select(run)

    # --- L1 ------------------------------------------------------------------------------------

    async def _view(self, task: Task) -> SchemaView:
        key = (task.db.dialect, task.db.path)
        if key not in self._views:
            self._views[key] = asyncio.ensure_future(
                asyncio.to_thread(introspect, task.db, self.settings.understanding.sample_rows)
            )
        try:
            return await asyncio.shield(self._views[key])
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure to read the schema ends this task only
            self._views.pop(key, None)
            raise _NoSchema(f"cannot read the schema of {task.db.db_id}: {exc}") from exc

    async def _understand(self, run: _Run) -> Context:
        task, u = run.task, Understanding()
        if self.settings.understanding.extractor_enabled:
            try:
                u = await self.extractor.extract(task.question, task.evidence, run.runtime)
            except Exception as exc:  # noqa: BLE001 - degradation 1
                if is_fatal(exc):
                    raise
                run.recorder.decide("extractor_failed", "l1", degradation=True, error=_describe(exc))
        cells, examples = await asyncio.gather(self._cells(run, u), self._examples(run, u))
        return Context(understanding=u, cell_hits=cells, example_hits=examples)

    async def _cells(self, run: _Run, u: Understanding) -> tuple[CellHit, ...]:
        cfg = self.settings.understanding
        if self.cell_retriever is None or cfg.cell_k == 0:
            return ()
        queries = u.literals or (run.task.question,)
        search = self.cell_retriever.search
        kwargs = _supported(search, k=cfg.cell_k, mode=cfg.cell_mode, threshold=cfg.cell_threshold)
        found = await self._retrieve(
            run, "l1.cell_retriever",
            lambda: asyncio.gather(*(_call(search, run.task.db.db_id, q, **kwargs) for q in queries)),
        )
        unique: dict[tuple[str, str, str], CellHit] = {}
        for hit in sorted((h for hits in found or () for h in hits), key=lambda h: -h.score):
            unique.setdefault((hit.table, hit.column, hit.value), hit)
        return tuple(unique.values())[: cfg.cell_k * len(queries)]

    async def _examples(self, run: _Run, u: Understanding) -> tuple[ExampleHit, ...]:
        cfg = self.settings.understanding
        if self.example_retriever is None or cfg.example_k == 0:
            return ()
        search = self.example_retriever.search
        kwargs = _supported(search, k=cfg.example_k, exclude_db=run.task.db.db_id, threshold=cfg.example_threshold)
        found = await self._retrieve(
            run, "l1.example_retriever", lambda: _call(search, u.skeleton or run.task.question, **kwargs)
        )
        return tuple(found or ())

    async def _retrieve(self, run: _Run, name: str, search: Callable[[], Awaitable]) -> object | None:
        start_wall, start = time.time(), time.monotonic()
        try:
            found = await search()
        except Exception as exc:  # noqa: BLE001 - degradation 2
            if _index_missing(exc):  # not a failure: this database was never indexed
                run.recorder.decide(f"{name.split('.')[-1]}_unavailable", "l1", error=_describe(exc))
                return None
            run.runtime.record_tool(name, "contextual", start_wall, start, ok=False, **{"error.type": _describe(exc)})
            run.recorder.decide(f"{name.split('.')[-1]}_failed", "l1", degradation=True, error=_describe(exc))
            return None
        hits = sum(len(x) for x in found) if found and isinstance(found[0], (list, tuple)) else len(found or ())
        run.runtime.record_tool(name, "contextual", start_wall, start, ok=True, **{"scale_analytics.hits": hits})
        return found

    def _focus(self, view: SchemaView, run: _Run) -> SchemaView:
        """The whole schema, or, when it is too large for the prompt, the tables the question,
        the extracted keywords or the cell hits point at."""
        if token_size(render_ddl(view)) <= self.settings.understanding.max_schema_tokens:
            return view
        words = {w.rstrip("s") for w in re.findall(r"[a-z0-9]+", " ".join(
            (run.task.question, run.task.evidence, *run.context.understanding.keywords)).lower())}
        hit_tables = {h.table.lower() for h in run.context.cell_hits}

        def mentioned(name: str) -> bool:
            return any(part.rstrip("s") in words for part in re.split(r"[^a-z0-9]+", name.lower()) if part)

        tables = [t.name for t in view.tables
                  if t.name.lower() in hit_tables or mentioned(t.name) or any(mentioned(c.name) for c in t.columns)]
        if not tables:
            return view
        run.recorder.decide("schema.focused", "l1", tables=len(tables), of_tables=len(view.tables))
        return restrict(view, tables=tables)

    # --- router --------------------------------------------------------------------------------

    async def _route(self, run: _Run, view: SchemaView) -> tuple[CandidateSQL | None, list[CandidateSQL], set]:
        rs = self.settings.router
        decision = self.router.assess(run.task, view, run.context.understanding)
        run.scaling = rs.scaling_for(decision.difficulty, self.scaling)
        probe_jobs = synthesis_jobs(run.scaling, rs.probe_k_reasoning, rs.probe_k_icl, rs.probe_strategies)
        run.runtime.call_cap = self._allowance(run.scaling, synthesis_jobs(run.scaling), probe_jobs)
        probe = await self._synthesize(run, probe_jobs, lineage=("gen",))
        agreement = self.router.agreement(probe)
        difficulty = decision.difficulty
        if not agreement.agreed:
            difficulty = self.router.escalate(difficulty)
            run.scaling = rs.scaling_for(difficulty, self.scaling)
            run.runtime.call_cap = self._allowance(run.scaling, synthesis_jobs(run.scaling), probe_jobs)
        run.recorder.route = RouteRecord(
            difficulty=decision.difficulty, profile=difficulty, features=decision.features.as_dict(),
            stopped_early=agreement.agreed, agreement=agreement.share,
        )
        run.recorder.decide("router.stop_early" if agreement.agreed else "router.widen", "router",
                            confidence=agreement.share, difficulty=decision.difficulty, profile=difficulty,
                            score=decision.score, probe=agreement.size)
        if agreement.agreed:
            buckets = self.bucketer.bucket(probe)
            run.recorder.snapshot_buckets("router.probe", buckets)
            run.recorder.ranking = tuple(b.hash for b in buckets)
            return buckets[0].representative, probe, set()
        return None, probe, {(j.family, j.index) for j in probe_jobs}

    # --- L2 synthesis --------------------------------------------------------------------------

    async def _synthesize(self, run: _Run, jobs: Sequence[GenJob], *, lineage: tuple[str, ...]) -> list[CandidateSQL]:
        temps: dict[str, list[float]] = {}
        for job in jobs:
            temps.setdefault(job.family, []).append(job.temperature)
        batches = await asyncio.gather(*(self._generate(run, f, t, lineage) for f, t in temps.items()))
        executed = await self._execute_all(run, [c for batch in batches for c in batch])
        run.add(executed)
        return executed

    async def _generate(self, run: _Run, family: str, temps: list[float], lineage: tuple[str, ...]) -> list[CandidateSQL]:
        icl = family != "reasoning"
        inp = GenerationInput(
            question=run.task.question,
            evidence=run.task.evidence,
            dialect=run.task.db.dialect,
            schema_text=run.light if icl else run.ddl,
            examples=run.context.example_hits if icl else (),
            cell_hits=run.context.cell_hits if icl else (),
            lessons=run.lessons,
        )
        try:
            return await self.generators[family].generate(inp, temps, run.runtime, lineage=lineage)
        except Exception as exc:  # noqa: BLE001 - degradation 3: continue with the other generators
            if is_fatal(exc):
                raise
            run.recorder.decide("generator_failed", "l2.synthesis", degradation=True, generator=family,
                                error=_describe(exc))
            return []

    async def _execute_all(self, run: _Run, candidates: Sequence[CandidateSQL], agent: str = "sandbox") -> list[CandidateSQL]:
        results = await asyncio.gather(*(run.runtime.execute(c.sql, run.task.db, agent=agent) for c in candidates))
        return [c.model_copy(update={"exec_result": r}) for c, r in zip(candidates, results)]

    # --- L2 refinement -------------------------------------------------------------------------

    async def _refinement_round(self, run: _Run, new: Sequence[CandidateSQL]) -> list[Critique]:
        """Fix the new errored candidates, then critique/revise new buckets; the round's critiques."""
        await self._fix_all(run, [c for c in new if not c.exec_result.ok
                                  and c.exec_result.error_kind not in UNFIXABLE_ERRORS])
        round_critiques: list[Critique] = []
        for pass_no in range(1, run.scaling.refinement_max_passes + 1):
            buckets = self.bucketer.bucket(run.pool)
            run.recorder.snapshot_buckets(f"refine:{pass_no}", buckets)
            fresh = [b for b in buckets if not b.error and b.hash not in run.critiques]
            if not fresh:
                break
            critiques = await self._critique_all(run, buckets, fresh)
            round_critiques += critiques
            edits = [(b, c) for b, c in critiques if c.verdict == "edit"]
            if not edits or not await self._revise_all(run, buckets, edits, pass_no):
                break
        return [c for _, c in round_critiques]

    async def _fix_all(self, run: _Run, errored: Sequence[CandidateSQL]) -> None:
        if run.scaling.fixer_max_passes == 0 or not errored:
            return
        # One repair per distinct SQL; duplicates inherit it (they keep their vote).
        distinct: dict[str, list[CandidateSQL]] = {}
        for c in errored:
            distinct.setdefault(c.sql, []).append(c)
        by_family: dict[str, list[list[CandidateSQL]]] = {}
        for group in distinct.values():
            by_family.setdefault(family_of(group[0].producer), []).append(group)

        async def fix_family(groups: list[list[CandidateSQL]]) -> list[CandidateSQL]:
            # Siblings of one generator go one after another so each sees the earlier repairs.
            out = []
            for group in groups:
                fixed = await self._fix_one(run, group[0])
                if fixed is not None:
                    out += [fixed] + [fixed.model_copy(update={"producer": c.producer}) for c in group[1:]]
            return out

        fixed = await asyncio.gather(*(fix_family(g) for g in by_family.values()))
        run.add([c for batch in fixed for c in batch])

    async def _fix_one(self, run: _Run, candidate: CandidateSQL) -> CandidateSQL | None:
        current = candidate
        for pass_no in range(1, run.scaling.fixer_max_passes + 1):
            earlier = run.recorder.recent_fixes(candidate.producer)
            try:
                sql, rationale = await self.fixer.fix(
                    FixInput(question=run.task.question, evidence=run.task.evidence, dialect=run.task.db.dialect,
                             schema_text=run.light, sql=current.sql, error=current.exec_result.error or "",
                             earlier=earlier),
                    run.runtime,
                )
            except Exception as exc:  # noqa: BLE001 - degradation 4: skip the pass, keep the candidate
                if is_fatal(exc):
                    raise
                run.recorder.fixes.append(FixAttempt(producer=candidate.producer, pass_no=pass_no,
                                                     error_before=current.exec_result.error or "",
                                                     sql_before=current.sql, sql_after=None))
                run.recorder.decide("fixer_failed", "l2.fix", degradation=True, error=_describe(exc))
                return None
            tried = {_norm(a.sql_after) for a in earlier if a.sql_after} | {_norm(current.sql), _norm(candidate.sql)}
            if _norm(sql) in tried:
                run.recorder.fixes.append(FixAttempt(producer=candidate.producer, pass_no=pass_no,
                                                     error_before=current.exec_result.error or "",
                                                     sql_before=current.sql, sql_after=sql,
                                                     error_after="repeats an earlier repair"))
                continue
            (attempt,) = await self._execute_all(
                run, [CandidateSQL(sql=sql, producer=candidate.producer, rationale=rationale or candidate.rationale,
                                   lineage=candidate.lineage + (f"fix:{pass_no}",))],
                agent="l2.sql_fixer",
            )
            run.recorder.fixes.append(FixAttempt(producer=candidate.producer, pass_no=pass_no,
                                                 error_before=current.exec_result.error or "",
                                                 sql_before=current.sql, sql_after=sql,
                                                 error_after=attempt.exec_result.error))
            if attempt.exec_result.ok:
                return attempt
            current = attempt
        return None

    async def _critique_all(self, run: _Run, buckets: Sequence[Bucket], fresh: Sequence[Bucket]) -> list[tuple[Bucket, Critique]]:
        total = sum(b.size for b in buckets)
        rows = self.settings.tournament.preview_rows

        def ask(b: Bucket):
            rep = b.representative
            return self.critic.critique(
                CritiqueInput(question=run.task.question, evidence=run.task.evidence, schema_text=run.light,
                              bucket_hash=b.hash, sql=rep.sql, rationale=clip(rep.rationale, 800),
                              preview=preview(rep.exec_result, rows), size=b.size, total=total,
                              others=_others(buckets, exclude=b.hash, rows=rows)),
                run.runtime,
            )

        replies = await asyncio.gather(*(ask(b) for b in fresh), return_exceptions=True)
        threshold = run.scaling.complexity_retry_threshold
        out: list[tuple[Bucket, Critique]] = []
        for bucket, reply in zip(fresh, replies):
            if isinstance(reply, BaseException):
                if is_fatal(reply):
                    raise reply
                run.recorder.decide("critic_failed", "l2.critique", degradation=True, bucket=bucket.hash,
                                    error=_describe(reply))
                continue
            if reply.complexity >= threshold and reply.verdict != "retry":
                # The threshold lives here, not in the model: the orchestrator forces the retry.
                reply = reply.model_copy(update={"verdict": "retry", "forced": True})
                run.recorder.decide("critique.forced_retry", "l2.critique", bucket=bucket.hash,
                                    complexity=reply.complexity, threshold=threshold)
            run.critiques[bucket.hash] = reply
            run.recorder.critiques.append(reply)
            out.append((bucket, reply))
        return out

    async def _revise_all(self, run: _Run, buckets: Sequence[Bucket], edits: Sequence[tuple[Bucket, Critique]],
                          pass_no: int) -> list[CandidateSQL]:
        rows = self.settings.tournament.preview_rows

        def ask(b: Bucket, c: Critique):
            rep = b.representative
            return self.revisor.revise(
                RevisionInput(question=run.task.question, evidence=run.task.evidence, dialect=run.task.db.dialect,
                              schema_text=run.light, sql=rep.sql, preview=preview(rep.exec_result, rows),
                              critique=c, others=_others(buckets, exclude=b.hash, rows=rows)),
                run.runtime,
            )

        replies = await asyncio.gather(*(ask(b, c) for b, c in edits), return_exceptions=True)
        drafts: list[tuple[Bucket, Critique, CandidateSQL]] = []
        for (bucket, critique), reply in zip(edits, replies):
            if isinstance(reply, BaseException):
                if is_fatal(reply):
                    raise reply
                run.recorder.revisions.append(RevisionDelta(bucket_hash=bucket.hash, before_hash=bucket.hash,
                                                            after_hash=None, error_class=critique.error_class))
                run.recorder.decide("revisor_failed", "l2.revise", degradation=True, bucket=bucket.hash,
                                    error=_describe(reply))
                continue
            sql, rationale = reply
            rep = bucket.representative
            drafts.append((bucket, critique, CandidateSQL(sql=sql, producer=rep.producer,
                                                          rationale=rationale or rep.rationale,
                                                          lineage=rep.lineage + (f"revise:{pass_no}",))))
        executed = await self._execute_all(run, [d for _, _, d in drafts], agent="l2.sql_revisor")
        for (bucket, critique, _), revised in zip(drafts, executed):
            run.recorder.revisions.append(RevisionDelta(bucket_hash=bucket.hash, before_hash=bucket.hash,
                                                        after_hash=revised.exec_result.hash,
                                                        error_class=critique.error_class))
        run.add(executed)
        return executed

    def _resynthesis_needed(self, run: _Run, round_critiques: Sequence[Critique]) -> bool:
        if not round_critiques:
            return False
        shared = [e for e, n in Counter(c.error_class for c in round_critiques if c.error_class).items() if n >= 2]
        accepted = any(c.verdict == "accept" for c in run.critiques.values())
        if any(c.verdict == "retry" for c in round_critiques):
            reason = "retry_verdict"
        elif not accepted and shared:
            reason = "shared_error_class"
        else:
            return False
        run.recorder.decide("resynthesis", "l2.refine", reason=reason,
                            shared=",".join(e.value for e in shared))
        return True

    # --- L3 ------------------------------------------------------------------------------------

    async def _select(self, run: _Run) -> CandidateSQL | None:
        buckets = self.bucketer.bucket(run.pool)
        run.recorder.snapshot_buckets("final", buckets)
        if run.scaling.tournament_enabled:
            result = await self.tournament.run(
                buckets,
                TournamentQuestion(question=run.task.question, evidence=run.task.evidence, schema_text=run.light),
                run.runtime,
            )
            if result is not None:
                run.recorder.matches += result.matches
                run.recorder.ranking = result.ranking
                if result.selector_failed:
                    run.recorder.decide("selector_failed", "l3", degradation=True,
                                        failed=sum(m.winner is None for m in result.matches))
                return result.winner.representative
        else:
            ranked = majority_vote(finalists(buckets, self.settings.tournament))
            run.recorder.ranking = tuple(b.hash for b in ranked)
            if ranked:
                return ranked[0].representative
        return self._best_so_far(run)

    def _best_so_far(self, run: _Run) -> CandidateSQL | None:
        """Majority vote over what exists; an errored candidate only when nothing ran."""
        if not run.pool:
            return None
        buckets = self.bucketer.bucket(run.pool)
        ranked = majority_vote(finalists(buckets, self.settings.tournament))
        return (ranked[0] if ranked else buckets[0]).representative

    # --- helpers -------------------------------------------------------------------------------

    def _allowance(self, scaling: ScalingConfig, jobs: Sequence[GenJob], extra: Sequence[GenJob] = ()) -> int:
        first_wave = len({(j.family, j.index) for j in (*jobs, *extra)})
        return call_allowance(scaling, first_wave=first_wave, max_finalists=self.settings.tournament.max_finalists,
                              extractor=self.settings.understanding.extractor_enabled)


class _NoSchema(Exception):
    """The task's schema could not be read: no candidate can be produced."""


def _others(buckets: Sequence[Bucket], *, exclude: str, rows: int, limit: int = 4) -> str:
    """Cross-bucket summary: what the other generators answered, and why."""
    lines = []
    for b in [b for b in buckets if b.hash != exclude][:limit]:
        rep = b.representative
        lines.append(f"- {b.size} attempt(s) by {', '.join(b.producers)}: {clip(rep.sql, 400)}\n"
                     f"  reasoning: {clip(rep.rationale, 300) or '(none)'}\n  result: {preview(rep.exec_result, rows)}")
    return "\n".join(lines)


def _lessons_from(critiques: Sequence[Critique], run: _Run) -> LessonsBlock:
    bad = [c for c in critiques if c.verdict != "accept"]
    producers = {c.bucket_hash: tuple(sorted({family_of(x.producer) for x in run.pool
                                               if x.exec_result and x.exec_result.hash == c.bucket_hash}))
                 for c in bad}
    return LessonsBlock(
        avoid=tuple(dict.fromkeys(c.error_class for c in bad if c.error_class)),
        corrections=tuple(Lesson(text=c.generator_feedback, scope=(ALL_GENERATORS,))
                          for c in bad if c.generator_feedback and c.feedback_kind == "correction"),
        warnings=tuple(Lesson(text=c.generator_feedback, scope=producers[c.bucket_hash] or (ALL_GENERATORS,))
                       for c in bad if c.generator_feedback and c.feedback_kind == "warning"),
    )


def _merge_lessons(old: LessonsBlock, new: LessonsBlock) -> LessonsBlock:
    def union(a, b):
        return tuple(dict.fromkeys((*a, *b)))

    return LessonsBlock(avoid=union(old.avoid, new.avoid), corrections=union(old.corrections, new.corrections),
                        warnings=union(old.warnings, new.warnings))


def _norm(sql: str) -> str:
    return " ".join(sql.lower().replace(";", " ").split())


def _describe(exc: BaseException) -> str:
    return clip(f"{type(exc).__name__}: {exc}", 200)


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
