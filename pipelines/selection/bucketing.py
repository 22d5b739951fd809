"""ExecutionBucketer (no LLM): candidates grouped by the hash of their execution result.

    [CandidateSQL(exec_result.hash)] ──► [Bucket(hash, members, error, empty)]

Candidates that return the same rows land in one bucket however differently they are written;
errors hash as ``ERR:…`` so identical errors share a bucket too. Errored and empty buckets are
*suspicious*. Order is deterministic: non-error buckets first, larger first, then those holding a
reasoning candidate, then by first appearance. Inside a bucket the representative comes first:
a reasoning candidate, then the least refined, then the shortest SQL.

    >>> from pipelines.contracts import CandidateSQL
    >>> from pipelines.sandbox import Sandbox
    >>> sqls = ["SELECT count(*) FROM singer", "SELECT count(Singer_ID) FROM singer",
    ...         "SELECT Name FROM singer WHERE Age > 99", "SELECT count(*) FROM singers"]
    >>> with Sandbox(isolation="inline") as sandbox:
    ...     results = [sandbox.execute(sql, db) for sql in sqls]
    >>> candidates = [CandidateSQL(sql=sql, producer="icl/direct", exec_result=result)
    ...               for sql, result in zip(sqls, results)]
    >>> [(b.size, b.error, b.empty) for b in ExecutionBucketer().bucket(candidates)]
    [(2, False, False), (1, False, True), (1, True, False)]
"""

from __future__ import annotations

from collections.abc import Iterable

from pipelines.agents.types import Bucket, family_of
from pipelines.contracts import CandidateSQL

REASONING = "reasoning"


def _member_key(indexed: tuple[int, CandidateSQL]) -> tuple:
    index, c = indexed
    return (family_of(c.producer) != REASONING, len(c.lineage), len(c.sql), index)


class ExecutionBucketer:
    def bucket(self, candidates: Iterable[CandidateSQL]) -> tuple[Bucket, ...]:
        groups: dict[str, list[tuple[int, CandidateSQL]]] = {}
        for index, candidate in enumerate(candidates):
            if candidate.exec_result is None:
                raise ValueError(
                    f"candidate from {candidate.producer} was not executed: {candidate.sql!r}"
                )
            groups.setdefault(candidate.exec_result.hash, []).append((index, candidate))
        buckets = []
        for result_hash, members in groups.items():
            members.sort(key=_member_key)
            result = members[0][1].exec_result
            bucket = Bucket(
                hash=result_hash,
                members=tuple(c for _, c in members),
                error=not result.ok,
                empty=result.empty,
            )
            first_seen = min(i for i, _ in members)
            buckets.append((bucket, first_seen))
        buckets.sort(
            key=lambda bf: (bf[0].error, -bf[0].size, REASONING not in bf[0].producers, bf[1])
        )
        return tuple(b for b, _ in buckets)


def has_reasoning(bucket: Bucket) -> bool:
    return REASONING in bucket.producers
