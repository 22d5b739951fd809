"""Tournament: round robin, ranking by wins, tie-breaks (bucket size, then reasoning), fallback."""

from __future__ import annotations

import pytest

from models.errors import BudgetExceeded, ModelUnavailable
from pipelines.agents.types import Bucket
from pipelines.contracts import CandidateSQL, ExecutionResult
from pipelines.selection.tournament import Tournament, TournamentQuestion, finalists, majority_vote
from pipelines.settings import TournamentSettings

Q = TournamentQuestion(question="q", schema_text="s")


def bucket(h, size, producer="icl/cot/T=1", *, empty=False, error=False):
    result = ExecutionResult(
        hash=h,
        row_count=0 if empty or error else 1,
        rows=() if empty or error else ((h,),),
        error="boom" if error else None,
    )
    members = tuple(
        CandidateSQL(sql=f"SELECT '{h}' -- {i}", producer=producer, exec_result=result)
        for i in range(size)
    )
    return Bucket(hash=h, members=members, error=error, empty=empty)


class Selector:
    """Picks by a fixed preference order of bucket hashes; records the pairs it saw."""

    def __init__(self, prefer=(), fail_on=None):
        self.prefer, self.fail_on, self.pairs = list(prefer), fail_on, []

    async def choose(self, inp, runtime):
        a, b = inp.sql_a.split("'")[1], inp.sql_b.split("'")[1]
        self.pairs.append((a, b))
        if self.fail_on and {a, b} == set(self.fail_on):
            raise ModelUnavailable("selector down")
        if a in self.prefer and b in self.prefer:
            return "A" if self.prefer.index(a) < self.prefer.index(b) else "B"
        return "A" if a in self.prefer else "B" if b in self.prefer else "A"


async def test_single_bucket_needs_no_call():
    selector = Selector()
    result = await Tournament(selector, TournamentSettings()).run(
        [bucket("a", 3), bucket("e", 1, error=True)], Q, None
    )
    assert result.winner.hash == "a" and selector.pairs == []


async def test_round_robin_ranks_by_wins():
    selector = Selector(prefer=["c", "b", "a"])
    field = [bucket("a", 3), bucket("b", 2), bucket("c", 1)]
    result = await Tournament(selector, TournamentSettings()).run(field, Q, None)
    assert (
        len(selector.pairs) == 6
        and result.ranking == ("c", "b", "a")
        and result.wins == {"a": 0, "b": 1, "c": 2}
    )
    assert {tuple(sorted(p)) for p in selector.pairs} == {("a", "b"), ("a", "c"), ("b", "c")}
    assert set(selector.pairs) == {
        ("a", "b"),
        ("b", "a"),
        ("a", "c"),
        ("c", "a"),
        ("b", "c"),
        ("c", "b"),
    }
    once = Selector(prefer=["c", "b", "a"])
    result = await Tournament(once, TournamentSettings(both_orders=False)).run(
        [bucket("a", 3), bucket("b", 2), bucket("c", 1)], Q, None
    )
    assert once.pairs == [("a", "b"), ("a", "c"), ("b", "c")] and result.ranking == ("c", "b", "a")


async def test_a_selector_that_only_sees_the_position_cannot_overturn_the_majority():
    class AlwaysB(Selector):
        async def choose(self, inp, runtime):
            return "B"

    buckets = [bucket("a", 3), bucket("b", 2), bucket("c", 1)]
    # judged once, the larger bucket always sits in A: the smallest bucket wins every match
    once = await Tournament(AlwaysB(), TournamentSettings(both_orders=False)).run(buckets, Q, None)
    assert once.winner.hash == "c" and once.wins == {"a": 0, "b": 1, "c": 2}
    # judged both ways every verdict flips with the order: all ties, bucket size decides
    both = await Tournament(AlwaysB(), TournamentSettings()).run(buckets, Q, None)
    assert (
        both.winner.hash == "a" and both.wins == {"a": 0, "b": 0, "c": 0} and len(both.matches) == 6
    )


async def test_ties_broken_by_bucket_size_then_reasoning():
    # A cycle: a beats b, b beats c, c beats a -> one win each.
    class Cycle(Selector):
        async def choose(self, inp, runtime):
            a, b = inp.sql_a.split("'")[1], inp.sql_b.split("'")[1]
            beats = {("a", "b"), ("b", "c"), ("c", "a")}
            return "A" if (a, b) in beats else "B"

    buckets = [bucket("a", 1), bucket("b", 2), bucket("c", 1, producer="reasoning/T=0.2")]
    result = await Tournament(Cycle(), TournamentSettings()).run(buckets, Q, None)
    assert set(result.wins.values()) == {1}
    assert result.ranking == ("b", "c", "a")  # size first, then the reasoning producer


async def test_a_clear_majority_wins_without_selector_calls_when_configured():
    selector = Selector(prefer=["b"])
    buckets = [bucket("a", 5), bucket("b", 2), bucket("c", 2), bucket("e", 3, error=True)]
    shortcut = await Tournament(selector, TournamentSettings(majority_share=0.5)).run(
        buckets, Q, None
    )
    assert (
        shortcut.by_majority and shortcut.winner.hash == "a" and selector.pairs == []
    )  # 5 of 9 executed
    played = await Tournament(selector, TournamentSettings()).run(buckets, Q, None)
    assert not played.by_majority and played.winner.hash == "b" and len(selector.pairs) == 6
    # below the share, or a tied lead, the tournament is played
    for field in (
        [bucket("a", 4), bucket("b", 3), bucket("c", 2)],
        [bucket("a", 3), bucket("b", 3)],
    ):
        result = await Tournament(
            Selector(prefer=["b"]), TournamentSettings(majority_share=0.5)
        ).run(field, Q, None)
        assert not result.by_majority and result.winner.hash == "b"


async def test_selector_failure_falls_back_to_majority_vote():
    selector = Selector(prefer=["c"], fail_on=("a", "c"))
    field = [bucket("a", 3), bucket("b", 2), bucket("c", 1)]
    result = await Tournament(selector, TournamentSettings()).run(field, Q, None)
    assert result.selector_failed and result.winner.hash == "a"
    assert sum(m.winner is None for m in result.matches) == 2  # the pair failed in both orders


async def test_budget_errors_are_not_swallowed():
    class Broke(Selector):
        async def choose(self, inp, runtime):
            raise BudgetExceeded("spent")

    with pytest.raises(BudgetExceeded):
        await Tournament(Broke(), TournamentSettings()).run(
            [bucket("a", 1), bucket("b", 1)], Q, None
        )


def test_finalists_drop_errors_and_empties_and_cap():
    buckets = [bucket("e", 5, error=True), bucket("z", 4, empty=True)] + [
        bucket(str(i), 3 - i % 3) for i in range(8)
    ]
    field = finalists(buckets, TournamentSettings(max_finalists=3))
    assert [b.hash for b in field] == ["0", "3", "6"]
    assert [b.hash for b in finalists([bucket("z", 4, empty=True)], TournamentSettings())] == ["z"]
    assert finalists([bucket("e", 1, error=True)], TournamentSettings()) == ()


def test_majority_vote_prefers_size_then_reasoning():
    ranked = majority_vote(
        [bucket("a", 2), bucket("b", 2, producer="reasoning/T=1"), bucket("c", 3)]
    )
    assert [b.hash for b in ranked] == ["c", "b", "a"]
