"""The test-time-compute pipeline. The only module that knows widths, loop caps and depths.

    Task ──► schema views (light, DDL) ──► L1: extractor ──► CellRetriever ║ ExampleRetriever
         ──► [router: probe wave ──► agree? stop early : escalate]
         ──► L2 synthesis: every generator family of GENERATORS × its k (reasoning over the DDL
             view ║ ICL strategies over the light view + examples + cell values), diverse
             temperatures ──► every candidate executed at once
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

    pipeline = Orchestrator(client=client, sandbox=sandbox, scaling=FullWidthScaling())  # a model
    prediction = await pipeline.answer(task)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pipelines.agents.base import GenerationInput, SQLGenerator, is_fatal
from pipelines.agents.errors import PipelineConfigError
from pipelines.agents.generators import build_generators, check_families
from pipelines.agents.keyword_extractor import KeywordSkeletonExtractor
from pipelines.agents.reasoning_selector import ReasoningSelector
from pipelines.agents.types import Critique
from pipelines.contracts import CandidateSQL, SchemaView
from pipelines.repair.refinement import (
    UNFIXABLE_ERRORS,
    Refiner,
    lessons_from,
    merge_lessons,
    resynthesis_reason,
)
from pipelines.schema import introspect, render_ddl, render_light
from pipelines.schema.cache import SchemaCache
from pipelines.selection.bucketing import ExecutionBucketer
from pipelines.selection.tournament import Tournament, TournamentQuestion, finalists, majority_vote
from pipelines.strategies.base import Strategy
from pipelines.strategies.full_width_settings import (
    FullWidthScaling,
    GenJob,
    call_allowance,
    resynthesis_jobs,
    synthesis_jobs,
)
from pipelines.strategies.router import DifficultyRouter
from pipelines.task_run import TaskRun, gather_all, record_failure
from pipelines.trace import RouteRecord
from pipelines.understanding import Understander


class Orchestrator(Strategy[FullWidthScaling]):
    """The full pipeline; ``answer(task) -> Prediction``, ``answer_with_trace`` for both."""

    Settings = FullWidthScaling
    stage = "orchestrator"

    def __init__(self, **parts: Any) -> None:
        super().__init__(**parts)
        check_families(self.scaling.k, "scaling.k")
        if self.scaling.router_enabled:
            router = self.settings.router
            check_families(router.probe_k, "pipeline.router.probe_k")
            for tier in router.profiles:
                try:  # a bad profile must fail here, not in the middle of a question
                    check_families(router.scaling_for(tier, self.scaling).k, "k")
                except ValueError as exc:
                    raise PipelineConfigError(
                        f"router profile {tier!r} is not a valid FullWidthScaling: {exc}"
                    ) from exc
        agents = self.settings.agents
        self.generators: dict[str, SQLGenerator] = build_generators(agents)
        self.understander = Understander(
            extractor=KeywordSkeletonExtractor(settings=agents.extractor),
            settings=self.settings.understanding,
            cell_retriever=self.cell_retriever,
            example_retriever=self.example_retriever,
        )
        self.refiner = Refiner.from_settings(self.settings)
        self.tournament = Tournament(
            ReasoningSelector(settings=agents.selector), self.settings.tournament
        )
        self.router = DifficultyRouter(self.settings.router)
        self.bucketer = ExecutionBucketer()
        self._views: SchemaCache[SchemaView] = SchemaCache()

    def call_allowance(self) -> int:
        return self._allowance(self.scaling, synthesis_jobs(self.scaling))

    async def conclude_search(
        self, run: TaskRun, memo: None, chosen: CandidateSQL | None
    ) -> CandidateSQL | None:
        if chosen is None:
            run.salvage()
            chosen = self._best_so_far(run)
        return chosen

    # --- the search ----------------------------------------------------------------------------

    async def search(self, run: TaskRun, memo: None) -> CandidateSQL | None:
        view = await self._view(run)
        run.context = await self.understander.understand(run)
        run.recorder.context = run.context
        run.retrieval = run.context.retrieval
        focused = self.understander.focus(view, run)
        run.light, run.ddl = render_light(focused), render_ddl(focused)

        jobs = synthesis_jobs(run.scaling)
        carried: list[CandidateSQL] = []
        if run.scaling.router_enabled:
            early, carried, done = await self._route(run, focused)
            if early is not None:
                return early
            jobs = [j for j in synthesis_jobs(run.scaling) if (j.family, j.index) not in done]
        new = carried + await self._synthesize(run, jobs, lineage=("gen",))
        round_critiques = await self._refinement_round(run, new)
        for pass_no in range(1, run.scaling.resynth_max_passes + 1):
            if not self._resynthesis_needed(run, round_critiques):
                break
            run.lessons = merge_lessons(run.lessons, lessons_from(round_critiques, run))
            run.recorder.lessons.append(run.lessons)
            new = await self._synthesize(
                run, resynthesis_jobs(run.scaling, pass_no), lineage=("gen", f"resynth:{pass_no}")
            )
            round_critiques = await self._refinement_round(run, new)
        return await self._select(run)

    # --- L1 ------------------------------------------------------------------------------------

    async def _view(self, run: TaskRun) -> SchemaView:
        db, sample_rows = run.task.db, self.settings.understanding.sample_rows
        return await self.once_per_database(
            self._views, db, lambda: asyncio.to_thread(introspect, db, sample_rows)
        )

    # --- router --------------------------------------------------------------------------------

    async def _route(
        self, run: TaskRun, view: SchemaView
    ) -> tuple[CandidateSQL | None, list[CandidateSQL], set]:
        # ``view`` is the schema the generators see (focused when the whole one is too large).
        rs = self.settings.router
        decision = self.router.assess(run.task, view, run.context.understanding)
        run.scaling = rs.scaling_for(decision.tier, self.scaling)
        probe_jobs = synthesis_jobs(run.scaling, rs.probe_k)
        run.runtime.call_cap = self._allowance(run.scaling, synthesis_jobs(run.scaling), probe_jobs)
        probe = await self._synthesize(run, probe_jobs, lineage=("gen",))
        agreement = self.router.agreement(probe)
        tier = decision.tier
        if not agreement.agreed:
            tier = self.router.escalate(tier)
            run.scaling = rs.scaling_for(tier, self.scaling)
            run.runtime.call_cap = self._allowance(
                run.scaling, synthesis_jobs(run.scaling), probe_jobs
            )
        run.recorder.route = RouteRecord(
            tier=decision.tier,
            profile=tier,
            features=decision.features.as_dict(),
            stopped_early=agreement.agreed,
            agreement=agreement.share,
        )
        run.recorder.decide(
            "router.stop_early" if agreement.agreed else "router.widen",
            "router",
            confidence=agreement.share,
            tier=decision.tier,
            profile=tier,
            score=decision.score,
            probe=agreement.size,
        )
        if agreement.agreed:
            buckets = self.bucketer.bucket(probe)
            run.recorder.snapshot_buckets("router.probe", buckets)
            run.recorder.ranking = tuple(b.hash for b in buckets)
            return buckets[0].representative, probe, set()
        return None, probe, {(j.family, j.index) for j in probe_jobs}

    # --- L2 synthesis --------------------------------------------------------------------------

    async def _synthesize(
        self, run: TaskRun, jobs: Sequence[GenJob], *, lineage: tuple[str, ...]
    ) -> list[CandidateSQL]:
        temps: dict[str, list[float]] = {}
        for job in jobs:
            temps.setdefault(job.family, []).append(job.temperature)

        async def generate_and_execute(
            family: str, family_temps: list[float]
        ) -> list[CandidateSQL]:
            executed = await run.execute_all(
                await self._generate(run, family, family_temps, lineage)
            )
            run.staged += executed
            return executed

        batches = await gather_all(*(generate_and_execute(f, t) for f, t in temps.items()))
        executed = [c for batch in batches for c in batch]
        run.end_wave(executed)
        return executed

    async def _generate(
        self, run: TaskRun, family: str, temps: list[float], lineage: tuple[str, ...]
    ) -> list[CandidateSQL]:
        generator = self.generators[family]
        spec, shown = generator.spec, self.settings.understanding.examples_in_prompt
        inp = GenerationInput(
            question=run.task.question,
            evidence=run.task.evidence,
            dialect=run.task.db.dialect,
            schema_text=run.light if spec.view == "light" else run.ddl,
            examples=run.context.example_hits[:shown] if spec.examples else (),
            cell_hits=run.context.cell_hits if spec.cells else (),
            lessons=run.lessons,
        )
        try:
            return await generator.generate(inp, temps, run.runtime, lineage=lineage)
        except Exception as exc:  # noqa: BLE001 - degradation 3: continue with the other generators
            if is_fatal(exc):
                raise
            record_failure(run, "generator", "l2.synthesis", exc, generator=family)
            return []

    # --- L2 refinement -------------------------------------------------------------------------

    async def _refinement_round(self, run: TaskRun, new: Sequence[CandidateSQL]) -> list[Critique]:
        """Fix the new errored candidates, then critique/revise new buckets; the round's critiques."""
        errored = [
            c
            for c in new
            if not c.exec_result.ok and c.exec_result.error_kind not in UNFIXABLE_ERRORS
        ]
        await self.refiner.fix_all(run, errored, max_passes=run.scaling.fixer_max_passes)
        round_critiques: list[Critique] = []
        for pass_no in range(1, run.scaling.refinement_max_passes + 1):
            buckets = self.bucketer.bucket(run.pool)
            run.recorder.snapshot_buckets(f"refine:{pass_no}", buckets)
            fresh = [b for b in buckets if not b.error and b.hash not in run.critiques]
            if not fresh:
                break
            read = await self.refiner.critique_all(run, buckets, fresh)
            critiques = [(b, self._apply_threshold(run, c)) for b, c in read]
            for bucket, critique in critiques:
                run.critiques[bucket.hash] = critique
                run.recorder.critiques.append(critique)
            round_critiques += [c for _, c in critiques]
            edits = [(b, c) for b, c in critiques if c.verdict == "edit"]
            if not edits or not await self.refiner.revise_all(run, buckets, edits, pass_no):
                break
        return round_critiques

    @staticmethod
    def _apply_threshold(run: TaskRun, critique: Critique) -> Critique:
        """The retry threshold lives here, not in the model: complexity at or above it forces retry."""
        threshold = run.scaling.complexity_retry_threshold
        if critique.complexity < threshold or critique.verdict == "retry":
            return critique
        run.recorder.decide(
            "critique.forced_retry",
            "l2.critique",
            bucket=critique.bucket_hash,
            complexity=critique.complexity,
            threshold=threshold,
        )
        return critique.model_copy(update={"verdict": "retry", "forced": True})

    def _resynthesis_needed(self, run: TaskRun, round_critiques: Sequence[Critique]) -> bool:
        reason = resynthesis_reason(round_critiques, list(run.critiques.values()))
        if reason is not None:
            run.recorder.decide("resynthesis", "l2.refine", reason=reason)
        return reason is not None

    # --- L3 ------------------------------------------------------------------------------------

    async def _select(self, run: TaskRun) -> CandidateSQL | None:
        buckets = self.bucketer.bucket(run.pool)
        run.recorder.snapshot_buckets("final", buckets)
        if run.scaling.tournament_enabled:
            result = await self.tournament.play(
                buckets,
                TournamentQuestion(
                    question=run.task.question, evidence=run.task.evidence, schema_text=run.light
                ),
                run.runtime,
                run.recorder,
                "l3",
            )
            if result is not None:
                return result.winner.representative
        else:
            ranked = majority_vote(finalists(buckets, self.settings.tournament))
            run.recorder.ranking = tuple(b.hash for b in ranked)
            if ranked:
                return ranked[0].representative
        return self._best_so_far(run)

    def _best_so_far(self, run: TaskRun) -> CandidateSQL | None:
        """Majority vote over what exists; an errored candidate only when nothing ran."""
        if not run.pool:
            return None
        buckets = self.bucketer.bucket(run.pool)
        ranked = majority_vote(finalists(buckets, self.settings.tournament))
        return (ranked[0] if ranked else buckets[0]).representative

    # --- helpers -------------------------------------------------------------------------------

    def _allowance(
        self, scaling: FullWidthScaling, jobs: Sequence[GenJob], extra: Sequence[GenJob] = ()
    ) -> int:
        first_wave = len({(j.family, j.index) for j in (*jobs, *extra)})
        return call_allowance(
            scaling,
            first_wave=first_wave,
            max_finalists=self.settings.tournament.max_finalists,
            both_orders=self.settings.tournament.both_orders,
            extractor=self.settings.understanding.extractor_enabled,
        )
