"""The gold references the focus recall is measured against (benchmarks/bench_schema_linking.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(_BENCH))  # the script imports benchmarks/_load.py as a sibling
_spec = importlib.util.spec_from_file_location(
    "bench_schema_linking", _BENCH / "bench_schema_linking.py"
)
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_tables_and_qualified_columns_of_the_gold_sql_without_its_ctes():
    tables, columns = bench.gold_references(
        "WITH t AS (SELECT member_id FROM claims) "
        "SELECT m.state, COUNT(*) FROM members AS m JOIN t ON t.member_id = m.member_id "
        "GROUP BY m.state",
        "sqlite",
    )
    assert tables == {"claims", "members"}
    assert ("members", "state") in columns and ("members", "member_id") in columns


def test_an_unqualified_column_belongs_to_the_only_table():
    tables, columns = bench.gold_references(
        "SELECT COUNT(*) FROM plans WHERE plan_type = 'HMO'", "sqlite"
    )
    assert tables == {"plans"} and columns == {("plans", "plan_type")}
