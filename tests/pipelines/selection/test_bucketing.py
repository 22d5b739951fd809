"""ExecutionBucketer: grouping by result hash, error and empty flags, deterministic order."""

from __future__ import annotations

import pytest

from pipelines.contracts import CandidateSQL, ExecutionResult
from pipelines.selection.bucketing import ExecutionBucketer


def cand(sql, producer, h, *, rows=1, error=None, lineage=("gen",), rationale=None):
    result = ExecutionResult(
        hash=h,
        error=error,
        row_count=0 if error else rows,
        rows=tuple((i,) for i in range(0 if error else rows)),
    )
    return CandidateSQL(
        sql=sql, producer=producer, exec_result=result, lineage=lineage, rationale=rationale
    )


def test_groups_by_hash_and_orders_buckets():
    buckets = ExecutionBucketer().bucket(
        [
            cand("SELECT x FROM t", "icl/cot/T=0.7", "ERR:1", error="no such column"),
            cand("SELECT a FROM t", "icl/direct/T=0.2", "h1"),
            cand("SELECT b FROM t", "icl/cot/T=1", "h2"),
            cand("SELECT a  FROM t", "icl/decompose/T=0.2", "h1"),
            cand("SELECT y FROM t", "icl/direct/T=1", "ERR:1", error="no such column"),
            cand("SELECT c FROM t", "reasoning/T=0.2", "h3", rows=0),
        ]
    )
    assert [(b.hash, b.size) for b in buckets] == [("h1", 2), ("h3", 1), ("h2", 1), ("ERR:1", 2)]
    assert [b.empty for b in buckets] == [False, True, False, False]
    assert [b.error for b in buckets] == [False, False, False, True]
    assert buckets[0].producers == ("icl/decompose", "icl/direct")


def test_representative_prefers_reasoning_then_least_refined_then_shortest():
    (bucket,) = ExecutionBucketer().bucket(
        [
            cand("SELECT a FROM t WHERE 1", "icl/direct/T=0.2", "h"),
            cand("SELECT a FROM t", "icl/cot/T=0.2", "h", lineage=("gen", "fix:1")),
            cand("SELECT a FROM t WHERE 1=1", "reasoning/T=1", "h", lineage=("gen", "revise:1")),
        ]
    )
    assert bucket.representative.producer == "reasoning/T=1"
    rest = bucket.members[1:]
    assert [m.producer for m in rest] == ["icl/direct/T=0.2", "icl/cot/T=0.2"]


def test_mean_rationale_length_is_recorded():
    (bucket,) = ExecutionBucketer().bucket(
        [
            cand("a", "icl/cot/T=1", "h", rationale="x" * 10),
            cand("b", "icl/cot/T=1", "h", rationale=None),
        ]
    )
    assert bucket.mean_rationale_chars == 5


def test_unexecuted_candidate_is_rejected():
    with pytest.raises(ValueError, match="not executed"):
        ExecutionBucketer().bucket([CandidateSQL(sql="SELECT 1", producer="icl/cot/T=1")])
