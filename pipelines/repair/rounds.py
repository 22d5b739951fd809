"""A strategy's listed repairs run on its candidates, by phase (``pipelines/repair/base.py``), no
LLM: the written ones rewrite a candidate before it runs, the failed ones rewrite an errored
candidate (rounds, each rewrite executed), the found_nothing ones ground a result with nothing
in it. One ``RepairRounds`` holds one question's repairs over its schema and what they did.

    rounds = RepairRounds(build_repairs(["joins", "columns", "quotes", "values"]), context)
    executed = await run.execute_all(rounds.before_run(candidates))
    rewrites = await rounds.after_error(run, executed, out_of_time=lambda: False)
    executed, rewrites = await rounds.ground(run, executed), await rounds.ground(run, rewrites)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pipelines.contracts import CandidateSQL
from pipelines.repair.base import Grounder, Repair, RepairContext, Rewriter
from pipelines.task_run import TaskRun

# The failed phase's rounds in the trace and the sandbox's log, and a rewrite's lineage tag.
ERROR_ROUNDS, ERROR_LINEAGE = "column_repair", "repair"


def nothing_found(candidate: CandidateSQL) -> bool:
    """No rows, or one row of zeros and NULLs: what aggregates over a filter that matched nothing give."""
    result = candidate.exec_result
    if result is None or not result.ok:
        return False
    return result.row_count == 0 or (
        result.row_count == 1 and all(v is None or v == 0 for v in result.rows[0])
    )


def has_rows(candidate: CandidateSQL) -> bool:
    result = candidate.exec_result
    return result is not None and result.ok and result.row_count > 0


class RepairRounds:
    """One question's repairs over its schema, by phase, in the order listed, and what they did:
    the errored SQLs the failed phase rewrote, the SQLs the found_nothing phase grounded."""

    def __init__(self, repairs: Sequence[Repair], context: RepairContext, stage: str) -> None:
        self.context, self.stage = context, stage
        self.written = [r for r in repairs if r.phase == "written" and isinstance(r, Rewriter)]
        self.failed = [r for r in repairs if r.phase == "failed" and isinstance(r, Rewriter)]
        self.grounders = [r for r in repairs if isinstance(r, Grounder)]
        # rewrites an errored candidate gets at most
        self.rounds = max((getattr(r, "rounds", 1) for r in self.failed), default=0)
        self.rewritten: set[str] = set()  # errored SQLs the failed phase rewrote
        self.grounded: dict[tuple[str, str], CandidateSQL | None] = {}  # (repair, SQL) -> rewrite

    def before_run(self, candidates: list[CandidateSQL]) -> list[CandidateSQL]:
        """Each candidate as the written rewriters leave it, before it runs."""
        for repair in self.written:
            out = []
            for candidate in candidates:
                rewrite = repair.rewrite(candidate.sql, self.context)
                out.append(
                    candidate.model_copy(
                        update={
                            "sql": rewrite.after,
                            "lineage": candidate.lineage + (repair.lineage or repair.name,),
                        }
                    )
                    if rewrite is not None
                    else candidate
                )
            candidates = out
        return candidates

    async def after_error(
        self, run: TaskRun, executed: Sequence[CandidateSQL], out_of_time: Callable[[], bool]
    ) -> list[CandidateSQL]:
        """Rewrites of the errored candidates, up to ``rounds`` each (each round the first failed
        repair with a rewrite); once ``out_of_time()``, only while the question has no answer
        (no candidate of the run's pool, of ``executed`` or rewritten ran without error). A
        rewrite keeps its candidate's producer (and vote)."""
        if self.rounds == 0:
            return []
        out: list[CandidateSQL] = []
        done: dict[str, CandidateSQL | None] = {}  # errored SQL -> its last rewrite, executed

        def stop() -> bool:
            # Past the budget a question with an answer takes no more rewrites; one without any
            # is still repaired, since an error is no answer: no model call, and each rewrite
            # is held to the sandbox's deadline.
            return out_of_time() and any(
                c.exec_result is not None and c.exec_result.ok for c in (*run.pool, *executed, *out)
            )

        for candidate in executed:
            if candidate.exec_result.ok:
                continue
            if candidate.sql not in done:
                last = await self._rewrite_rounds(run, candidate, stop)
                done[candidate.sql] = last
                if last is not None:
                    self.rewritten.add(candidate.sql)
                run.recorder.decide(
                    ERROR_ROUNDS,
                    self.stage,
                    generator=candidate.producer,
                    repaired=last is not None and last.exec_result.ok,
                    error=candidate.exec_result.error or "",
                )
            if (last := done[candidate.sql]) is not None:
                out.append(last.model_copy(update={"producer": candidate.producer}))
        return out

    async def _rewrite_rounds(
        self, run: TaskRun, candidate: CandidateSQL, out_of_time: Callable[[], bool]
    ) -> CandidateSQL | None:
        current, last = candidate, None
        for _ in range(self.rounds):
            # A rewrite runs its SQL, and one that joins its way into the sandbox's limits takes
            # as long as the limit (20 s on claims).
            if out_of_time():
                break
            context = self.context.model_copy(update={"error": current.exec_result.error or ""})
            rewrite = next(
                (r for repair in self.failed if (r := repair.rewrite(current.sql, context))),
                None,
            )
            if rewrite is None or rewrite.after == current.sql:
                break
            (current,) = await run.execute_all(
                [
                    CandidateSQL(
                        sql=rewrite.after,
                        producer=candidate.producer,
                        rationale=candidate.rationale,
                        lineage=candidate.lineage + (ERROR_LINEAGE,),
                    )
                ],
                agent=ERROR_ROUNDS,
            )
            last = current
            if current.exec_result.ok:
                break
        return last

    async def ground(self, run: TaskRun, candidates: Sequence[CandidateSQL]) -> list[CandidateSQL]:
        """Each candidate that found nothing (no rows, or counts of zero), or that a grounder
        still suspects (a ``!=`` literal), replaced by its grounded rewrite when that finds
        something; a rewrite keeps its candidate's producer (a SQL drawn twice is probed once)."""
        out = list(candidates)
        for repair in self.grounders:
            grounded = []
            for candidate in out:
                key = (repair.name, candidate.sql)
                empty = nothing_found(candidate)
                if key not in self.grounded and (
                    empty or (has_rows(candidate) and repair.suspect(candidate.sql, self.context))
                ):
                    self.grounded[key] = await self._grounded(
                        run, repair, candidate, rows=not empty
                    )
                rewrite = self.grounded.get(key)
                grounded.append(
                    rewrite.model_copy(update={"producer": candidate.producer})
                    if rewrite
                    else candidate
                )
            out = grounded
        return out

    async def _grounded(
        self, run: TaskRun, repair: Grounder, candidate: CandidateSQL, *, rows: bool
    ) -> CandidateSQL | None:
        agent = repair.agent or repair.name
        rewrite = await repair.ground(
            candidate.sql,
            self.context,
            lambda probe: run.runtime.execute(probe, run.task.db, agent=agent),
            rows=rows,
        )
        executed = None
        if rewrite is not None and rewrite.after != candidate.sql:
            (executed,) = await run.execute_all(
                [
                    candidate.model_copy(
                        update={
                            "sql": rewrite.after,
                            "lineage": candidate.lineage + (repair.lineage or repair.name,),
                        }
                    )
                ],
                agent=agent,
            )
        grounded = executed is not None and not nothing_found(executed)
        run.recorder.decide(
            agent,
            self.stage,
            generator=candidate.producer,
            proposed=rewrite is not None,
            grounded=grounded,
        )
        return executed if grounded else None
