"""LikelihoodSelector's choice of SQLs to score; the scoring itself is exercised through the
adaptive pipeline (tests/pipelines/strategies/test_adaptive.py) and against the real server
(tests/models/backends/test_openai_compat.py)."""

import pytest

from pipelines.agents.types import Bucket
from pipelines.contracts import CandidateSQL, ExecutionResult
from pipelines.selection.likelihood import LikelihoodSelector


def _bucket(name: str, *sqls: str, error: bool = False) -> Bucket:
    result = (
        ExecutionResult(error="boom", error_kind="sql_error", hash=f"ERR:{name}")
        if error
        else (ExecutionResult(columns=("n",), rows=((1,),), row_count=1, hash=name))
    )
    members = tuple(CandidateSQL(sql=s, producer="p", exec_result=result) for s in sqls)
    return Bucket(hash=name, members=members, error=error, empty=False)


def test_distinct_sqls_larger_buckets_first_most_frequent_first() -> None:
    buckets = [
        _bucket("small", "SELECT 3"),
        _bucket("error", "SELECT x", "SELECT x", "SELECT x", error=True),
        _bucket("large", "SELECT 1", "SELECT 2", "SELECT 2 ", "SELECT 1", "SELECT 2"),
    ]
    picked = LikelihoodSelector(max_sqls=8).candidates(buckets)
    assert [c.sql.strip() for c in picked] == ["SELECT 2", "SELECT 1", "SELECT 3"]
    assert [c.sql for c in LikelihoodSelector(max_sqls=2).candidates(buckets)] == [
        "SELECT 2",
        "SELECT 1",
    ]


def test_at_least_one_sql_is_scored() -> None:
    with pytest.raises(ValueError, match="max_sqls >= 1 and parallel >= 1"):
        LikelihoodSelector(max_sqls=0)
