"""L2 refinement steps: repair errored candidates, critique buckets, revise on ``edit``.

    errored candidates ──► SQLFixer (per generator, siblings in sequence so a failed repair is
                           seen and not repeated; at most ``max_passes`` per candidate)
    new non-error buckets ──► CritiqueAgent (representative + every other bucket's answer)
                           ──► verdict forced to ``retry`` at ``complexity ≥ threshold``
    ``edit`` verdicts ──► SQLRevisor (critique + cross-bucket summary) ──► executed, RevisionDelta

Caps and thresholds come in as arguments: the orchestrator owns them. Each step that fails is
skipped with a DecisionEvent (the candidates it had stay in the pool).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

from pipelines.agents.base import is_fatal
from pipelines.agents.critique_agent import CritiqueAgent, CritiqueInput
from pipelines.agents.render import clip, preview
from pipelines.agents.sql_fixer import FixInput, SQLFixer
from pipelines.agents.sql_revisor import RevisionInput, SQLRevisor
from pipelines.agents.types import (
    ALL_GENERATORS,
    Bucket,
    Critique,
    FixAttempt,
    Lesson,
    LessonsBlock,
    RevisionDelta,
    family_of,
)
from pipelines.contracts import CandidateSQL
from pipelines.prompt_fit import within_context
from pipelines.settings import PipelineSettings
from pipelines.task_run import TaskRun, gather_all, record_failure

UNFIXABLE_ERRORS = {"database_unavailable"}


def _on_light_view(run: TaskRun) -> dict[str, str]:
    """The fields of ``SchemaQuestionInput`` every refinement agent is given: the question and
    its evidence, shown with the light schema view (read at each call: a call refused for length
    narrows it, pipelines/prompt_fit.py)."""
    return {"question": run.task.question, "evidence": run.task.evidence, "schema_text": run.light}


class Refiner:
    def __init__(
        self, *, fixer: SQLFixer, critic: CritiqueAgent, revisor: SQLRevisor, preview_rows: int = 5
    ) -> None:
        self.fixer = fixer
        self.critic = critic
        self.revisor = revisor
        self.preview_rows = preview_rows

    @classmethod
    def from_settings(cls, settings: PipelineSettings) -> Refiner:
        """The fixer, critic and revisor of ``settings.agents``; previews as wide as the
        tournament's."""
        agents = settings.agents
        return cls(
            fixer=SQLFixer(settings=agents.fixer),
            critic=CritiqueAgent(settings=agents.critic),
            revisor=SQLRevisor(settings=agents.revisor),
            preview_rows=settings.tournament.preview_rows,
        )

    async def fix_all(
        self,
        run: TaskRun,
        errored: Sequence[CandidateSQL],
        *,
        max_passes: int,
        siblings_in_sequence: bool = True,
    ) -> None:
        """Repair errored candidates; the repaired ones join the pool. ``siblings_in_sequence=False``
        repairs every distinct SQL at once (decoded together: faster on a CPU, no shared memory)."""
        if max_passes == 0 or not errored:
            return
        # One repair per distinct SQL; duplicates inherit it (they keep their vote).
        distinct: dict[str, list[CandidateSQL]] = {}
        for c in errored:
            distinct.setdefault(c.sql, []).append(c)
        by_family: dict[str, list[list[CandidateSQL]]] = {}
        for i, group in enumerate(distinct.values()):
            key = family_of(group[0].producer) if siblings_in_sequence else str(i)
            by_family.setdefault(key, []).append(group)

        async def fix_family(groups: list[list[CandidateSQL]]) -> list[CandidateSQL]:
            # Siblings of one generator go one after another so each sees the earlier repairs.
            out = []
            for group in groups:
                fixed = await self._fix_one(run, group[0], max_passes)
                if fixed is not None:
                    out += [fixed] + [
                        fixed.model_copy(update={"producer": c.producer}) for c in group[1:]
                    ]
            return out

        fixed = await gather_all(*(fix_family(g) for g in by_family.values()))
        run.add([c for batch in fixed for c in batch])

    async def _fix_one(
        self, run: TaskRun, candidate: CandidateSQL, max_passes: int
    ) -> CandidateSQL | None:
        current = candidate

        def note(pass_no: int, sql_after: str | None, error_after: str | None = None) -> None:
            """The fixer's pass ``pass_no`` on ``current`` (a descendant of ``candidate``)."""
            run.recorder.fixes.append(
                FixAttempt(
                    producer=candidate.producer,
                    pass_no=pass_no,
                    error_before=current.exec_result.error or "",
                    sql_before=current.sql,
                    sql_after=sql_after,
                    error_after=error_after,
                )
            )

        for pass_no in range(1, max_passes + 1):
            earlier = run.recorder.recent_fixes(candidate.producer)
            try:
                sql, rationale = await within_context(
                    run,
                    lambda _, sql=current.sql, error=current.exec_result.error, earlier=earlier: (
                        self.fixer.fix(
                            FixInput(
                                **_on_light_view(run),
                                dialect=run.task.db.dialect,
                                sql=sql,
                                error=error or "",
                                earlier=earlier,
                            ),
                            run.runtime,
                        )
                    ),
                    stage="l2.fix",
                    helps=False,
                )
            except Exception as exc:  # noqa: BLE001 - degradation 4: skip the pass, keep the candidate
                if is_fatal(exc):
                    raise
                note(pass_no, sql_after=None)
                record_failure(run, "fixer", "l2.fix", exc)
                return None
            tried = {_norm(a.sql_after) for a in earlier if a.sql_after} | {
                _norm(current.sql),
                _norm(candidate.sql),
            }
            if _norm(sql) in tried:
                note(pass_no, sql_after=sql, error_after="repeats an earlier repair")
                continue
            (attempt,) = await run.execute_all(
                [
                    CandidateSQL(
                        sql=sql,
                        producer=candidate.producer,
                        rationale=rationale or candidate.rationale,
                        lineage=candidate.lineage + (f"fix:{pass_no}",),
                    )
                ],
                agent="l2.sql_fixer",
            )
            note(pass_no, sql_after=sql, error_after=attempt.exec_result.error)
            if attempt.exec_result.ok:
                return attempt
            current = attempt
        return None

    async def critique_all(
        self, run: TaskRun, buckets: Sequence[Bucket], fresh: Sequence[Bucket]
    ) -> list[tuple[Bucket, Critique]]:
        """The critic's reading of each fresh bucket (as the model wrote it; failures skipped)."""
        total = sum(b.size for b in buckets)
        rows = self.preview_rows

        def ask(b: Bucket):
            rep = b.representative
            return within_context(
                run,
                lambda _: self.critic.critique(
                    CritiqueInput(
                        **_on_light_view(run),
                        bucket_hash=b.hash,
                        sql=rep.sql,
                        rationale=clip(rep.rationale, 800),
                        preview=preview(rep.exec_result, rows),
                        size=b.size,
                        total=total,
                        others=_others(buckets, exclude=b.hash, rows=rows),
                    ),
                    run.runtime,
                ),
                stage="l2.critique",
                helps=False,
            )

        replies = await asyncio.gather(*(ask(b) for b in fresh), return_exceptions=True)
        out: list[tuple[Bucket, Critique]] = []
        for bucket, reply in zip(fresh, replies):
            if isinstance(reply, BaseException):
                if is_fatal(reply):
                    raise reply
                record_failure(run, "critic", "l2.critique", reply, bucket=bucket.hash)
                continue
            out.append((bucket, reply))
        return out

    async def revise_all(
        self,
        run: TaskRun,
        buckets: Sequence[Bucket],
        edits: Sequence[tuple[Bucket, Critique]],
        pass_no: int,
    ) -> list[CandidateSQL]:
        """Revised representatives of the ``edit`` buckets, executed and added to the pool."""
        rows = self.preview_rows

        def ask(b: Bucket, c: Critique):
            rep = b.representative
            return within_context(
                run,
                lambda _: self.revisor.revise(
                    RevisionInput(
                        **_on_light_view(run),
                        dialect=run.task.db.dialect,
                        sql=rep.sql,
                        preview=preview(rep.exec_result, rows),
                        critique=c,
                        others=_others(buckets, exclude=b.hash, rows=rows),
                    ),
                    run.runtime,
                ),
                stage="l2.revise",
                helps=False,
            )

        replies = await asyncio.gather(*(ask(b, c) for b, c in edits), return_exceptions=True)
        drafts: list[tuple[Bucket, Critique, CandidateSQL]] = []
        for (bucket, critique), reply in zip(edits, replies):
            if isinstance(reply, BaseException):
                if is_fatal(reply):
                    raise reply
                run.recorder.revisions.append(
                    RevisionDelta(
                        bucket_hash=bucket.hash,
                        before_hash=bucket.hash,
                        after_hash=None,
                        error_class=critique.error_class,
                    )
                )
                record_failure(run, "revisor", "l2.revise", reply, bucket=bucket.hash)
                continue
            sql, rationale = reply
            rep = bucket.representative
            drafts.append(
                (
                    bucket,
                    critique,
                    CandidateSQL(
                        sql=sql,
                        producer=rep.producer,
                        rationale=rationale or rep.rationale,
                        lineage=rep.lineage + (f"revise:{pass_no}",),
                    ),
                )
            )
        executed = await run.execute_all([d for _, _, d in drafts], agent="l2.sql_revisor")
        for (bucket, critique, _), revised in zip(drafts, executed):
            run.recorder.revisions.append(
                RevisionDelta(
                    bucket_hash=bucket.hash,
                    before_hash=bucket.hash,
                    after_hash=revised.exec_result.hash,
                    error_class=critique.error_class,
                )
            )
        run.add(executed)
        return executed


def _others(buckets: Sequence[Bucket], *, exclude: str, rows: int, limit: int = 4) -> str:
    """Cross-bucket summary: what the other generators answered, and why."""
    lines = []
    for b in [b for b in buckets if b.hash != exclude][:limit]:
        rep = b.representative
        lines.append(
            f"- {b.size} attempt(s) by {', '.join(b.producers)}: {clip(rep.sql, 400)}\n"
            f"  reasoning: {clip(rep.rationale, 300) or '(none)'}\n  result: {preview(rep.exec_result, rows)}"
        )
    return "\n".join(lines)


def lessons_from(critiques: Sequence[Critique], run: TaskRun) -> LessonsBlock:
    bad = [c for c in critiques if c.verdict != "accept"]
    producers = {
        c.bucket_hash: tuple(
            sorted(
                {
                    family_of(x.producer)
                    for x in run.pool
                    if x.exec_result and x.exec_result.hash == c.bucket_hash
                }
            )
        )
        for c in bad
    }
    return LessonsBlock(
        avoid=tuple(dict.fromkeys(c.error_class for c in bad if c.error_class)),
        corrections=tuple(
            Lesson(text=c.generator_feedback, scope=(ALL_GENERATORS,))
            for c in bad
            if c.generator_feedback and c.feedback_kind == "correction"
        ),
        warnings=tuple(
            Lesson(text=c.generator_feedback, scope=producers[c.bucket_hash] or (ALL_GENERATORS,))
            for c in bad
            if c.generator_feedback and c.feedback_kind == "warning"
        ),
    )


def merge_lessons(old: LessonsBlock, new: LessonsBlock) -> LessonsBlock:
    def union(a, b):
        return tuple(dict.fromkeys((*a, *b)))

    return LessonsBlock(
        avoid=union(old.avoid, new.avoid),
        corrections=union(old.corrections, new.corrections),
        warnings=union(old.warnings, new.warnings),
    )


def _norm(sql: str) -> str:
    return " ".join(sql.lower().replace(";", " ").split())


def resynthesis_reason(
    round_critiques: Sequence[Critique], all_critiques: Sequence[Critique]
) -> str | None:
    """Why the generators should run again with lessons, or None.

    ``retry_verdict``: a critique of this round says retry (forced or not);
    ``shared_error_class``: no bucket was ever accepted and two or more of this round's critiques
    name the same error class (the generators misread the same thing).
    """
    if any(c.verdict == "retry" for c in round_critiques):
        return "retry_verdict"
    shared = [
        e
        for e, n in Counter(c.error_class for c in round_critiques if c.error_class).items()
        if n >= 2
    ]
    if shared and not any(c.verdict == "accept" for c in all_critiques):
        return "shared_error_class"
    return None
