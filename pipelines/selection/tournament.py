"""L3 selection: a round-robin of pairwise ReasoningSelector calls over bucket representatives.

    buckets ──► finalists (one representative per non-error bucket, largest first, capped)
            ├─ one finalist ──► it wins, no call
            └─ n finalists ──► n(n-1)/2 pairs, each judged as (A, B) and as (B, A) (concurrent)
                 ──► a pair's win only when both verdicts agree, else a tie
                 ──► rank by (wins, bucket size, holds a reasoning candidate, bucket order)

If any selector call fails the ranking falls back to a majority vote over bucket sizes. With
``majority_share`` set, a bucket holding that share of the executed candidates (and more than
any other) wins without a call.
``both_orders=False`` judges each pair once, the larger bucket as A.

    result = await Tournament(selector, TournamentSettings()).run(buckets, inp, runtime)  # a model
    result.winner.representative.sql
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from itertools import combinations

from core.types import Frozen
from pipelines.agents.base import is_fatal
from pipelines.agents.reasoning_selector import ReasoningSelector, SelectionInput
from pipelines.agents.render import preview
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Bucket, Match
from pipelines.selection.bucketing import has_reasoning
from pipelines.settings import TournamentSettings
from pipelines.trace import TraceRecorder


class TournamentQuestion(Frozen):
    question: str
    evidence: str = ""
    schema_text: str


class TournamentResult(Frozen):
    winner: Bucket
    ranking: tuple[str, ...]  # bucket hashes, best first
    matches: tuple[Match, ...] = ()
    wins: dict[str, int] = {}
    selector_failed: bool = False
    by_majority: bool = False  # decided by majority_share, no selector call


def finalists(buckets: Sequence[Bucket], settings: TournamentSettings) -> tuple[Bucket, ...]:
    """Non-error buckets (empty ones only if nothing else returned rows), largest first, capped."""
    ok = [b for b in buckets if not b.error]
    if settings.drop_empty and any(not b.empty for b in ok):
        ok = [b for b in ok if not b.empty]
    return tuple(
        sorted(ok, key=lambda b: (-b.size, not has_reasoning(b)))[: settings.max_finalists]
    )


def majority_vote(buckets: Sequence[Bucket]) -> tuple[Bucket, ...]:
    """Buckets ranked by size, then by holding a reasoning candidate, then by order (stable)."""
    return tuple(sorted(buckets, key=lambda b: (-b.size, not has_reasoning(b))))


class Tournament:
    def __init__(self, selector: ReasoningSelector, settings: TournamentSettings) -> None:
        self.selector = selector
        self.settings = settings

    async def play(
        self,
        buckets: Sequence[Bucket],
        question: TournamentQuestion,
        runtime: AgentRuntime,
        recorder: TraceRecorder,
        stage: str,
    ) -> TournamentResult | None:
        """``run``, its matches and ranking kept in ``recorder``, a majority's shortcut and a
        failed selector recorded as decisions at ``stage`` (the latter a degradation)."""
        result = await self.run(buckets, question, runtime)
        if result is None:
            return None
        recorder.matches += result.matches
        recorder.ranking = result.ranking
        if result.by_majority:
            recorder.decide(
                "majority_shortcut",
                stage,
                share=self.settings.majority_share,
                size=result.winner.size,
            )
        if result.selector_failed:
            recorder.decide(
                "selector_failed",
                stage,
                degradation=True,
                failed=sum(m.winner is None for m in result.matches),
            )
        return result

    async def run(
        self, buckets: Sequence[Bucket], question: TournamentQuestion, runtime: AgentRuntime
    ) -> TournamentResult | None:
        """None when no bucket executed without error."""
        field = finalists(buckets, self.settings)
        if not field:
            return None
        if len(field) == 1:
            return TournamentResult(winner=field[0], ranking=(field[0].hash,))
        if self._clear_majority(buckets, field):
            ranked = majority_vote(field)
            return TournamentResult(
                winner=ranked[0], ranking=tuple(b.hash for b in ranked), by_majority=True
            )
        pairs = list(combinations(field, 2))
        games = pairs + [(b, a) for a, b in pairs] if self.settings.both_orders else pairs
        outcomes = await asyncio.gather(
            *(self._match(a, b, question, runtime) for a, b in games), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and is_fatal(outcome):
                raise outcome
        verdicts = [None if isinstance(o, BaseException) else o for o in outcomes]
        matches = tuple(Match(a=a.hash, b=b.hash, winner=v) for (a, b), v in zip(games, verdicts))
        if any(m.winner is None for m in matches):
            ranked = majority_vote(field)
            return TournamentResult(
                winner=ranked[0],
                ranking=tuple(b.hash for b in ranked),
                matches=matches,
                selector_failed=True,
            )
        wins = {b.hash: 0 for b in field}
        reversed_verdicts = verdicts[len(pairs) :] if self.settings.both_orders else verdicts
        for first, second in zip(verdicts[: len(pairs)], reversed_verdicts):
            if (
                first == second
            ):  # a verdict that flips with the order is the position talking: a tie
                wins[first] += 1
        order = {b.hash: i for i, b in enumerate(field)}
        ranked = sorted(
            field, key=lambda b: (-wins[b.hash], -b.size, not has_reasoning(b), order[b.hash])
        )
        return TournamentResult(
            winner=ranked[0], ranking=tuple(b.hash for b in ranked), matches=matches, wins=wins
        )

    def _clear_majority(self, buckets: Sequence[Bucket], field: Sequence[Bucket]) -> bool:
        share = self.settings.majority_share
        if share is None:
            return False
        executed = sum(b.size for b in buckets if not b.error)
        return field[0].size > field[1].size and field[0].size >= share * executed

    async def _match(
        self, a: Bucket, b: Bucket, q: TournamentQuestion, runtime: AgentRuntime
    ) -> str:
        rows = self.settings.preview_rows
        choice = await self.selector.choose(
            SelectionInput(
                question=q.question,
                evidence=q.evidence,
                schema_text=q.schema_text,
                sql_a=a.representative.sql,
                preview_a=preview(a.representative.exec_result, rows),
                sql_b=b.representative.sql,
                preview_b=preview(b.representative.exec_result, rows),
            ),
            runtime,
        )
        return a.hash if choice == "A" else b.hash
