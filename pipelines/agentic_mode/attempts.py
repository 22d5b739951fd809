"""The agentic mode's memory of one question: its attempts (``Tried``), the entities shown, the
history the generator sees; and the answer when no attempt was accepted (``best_attempt``).

    session = Session(entities=["issues"])
    session.tried.append(Tried(number=1, sql="SELECT 1"))
    session.tried[0].candidate.producer   ──► 'agentic/attempt_1'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.agentic_mode.generate import Attempt
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.contracts import CandidateSQL, ExecutionResult
from pipelines.task_run import TaskRun


def normal(sql: str) -> str:
    """``sql`` as attempts are compared: whitespace collapsed, no trailing semicolon, lower case."""
    return " ".join(sql.split()).rstrip(";").lower()


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


async def best_attempt(run: TaskRun, session: Session) -> CandidateSQL | None:
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
