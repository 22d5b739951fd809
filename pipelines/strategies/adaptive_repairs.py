"""The adaptive pipeline's schema-grounded repairs of its candidates, no LLM: a JOIN without a
key rewritten before it runs (``rejoin``), an unbound column or a string an apostrophe broke
rewritten after (``repair_columns``), a filter that matches no stored value grounded in the
stored values (``ground_values``). Each reads its repair off the question's ``State``.

    executed = await run.execute_all(rejoin(state, candidates))
    repaired = await repair_columns(run, state, executed, rounds=3, out_of_time=lambda: False)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pipelines.contracts import CandidateSQL
from pipelines.repair.values import ValueRepair
from pipelines.strategies.adaptive_state import State, has_rows, nothing_found
from pipelines.task_run import TaskRun


def rejoin(state: State, candidates: list[CandidateSQL]) -> list[CandidateSQL]:
    """Each candidate whose JOIN ... ON names no key between the tables, with the schema's
    one join key in its place (pipelines/repair/joins.py), before it runs."""
    if state.joins is None:
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


async def ground_values(
    run: TaskRun, state: State, candidates: Sequence[CandidateSQL]
) -> list[CandidateSQL]:
    """Each candidate that found nothing (no rows, or counts of zero), or that excludes a
    literal (``!=``), and whose string filters name no stored value, replaced by its rewrite
    that names them (pipelines/repair/values.py) when the rewrite finds something; a rewrite
    keeps its candidate's producer (a SQL drawn twice is probed once)."""
    repair = state.values
    if repair is None:
        return list(candidates)
    out = []
    for candidate in candidates:
        empty = nothing_found(candidate)
        if candidate.sql not in state.grounded and (
            empty or (has_rows(candidate) and repair.excludes_a_literal(candidate.sql))
        ):
            state.grounded[candidate.sql] = await _grounded(
                run, repair, candidate, negated_only=not empty
            )
        rewrite = state.grounded.get(candidate.sql)
        out.append(
            rewrite.model_copy(update={"producer": candidate.producer}) if rewrite else candidate
        )
    return out


async def _grounded(
    run: TaskRun, repair: ValueRepair, candidate: CandidateSQL, *, negated_only: bool
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


async def repair_columns(
    run: TaskRun,
    state: State,
    executed: Sequence[CandidateSQL],
    rounds: int,
    out_of_time: Callable[[], bool],
) -> list[CandidateSQL]:
    """Schema-grounded rewrites of the candidates whose error names an unbound column (or a
    string an apostrophe broke), up to ``rounds`` each, none once ``out_of_time()``; a rewrite
    keeps its candidate's producer (and vote)."""
    repair = state.repair
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
                if out_of_time():
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
