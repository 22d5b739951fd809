"""The index command's question table: SDS buckets and the constructs of the gold SQL, shown
only for a benchmark that rates its questions."""

from __future__ import annotations

from rich.console import Console

from eval.cli.index_cli import questions_table
from pipelines.contracts import DatabaseRef, Task

DB = DatabaseRef(db_id="workitems", path="workitems.duckdb", dialect="duckdb")


def _task(i: int, sql: str, sds: int | None) -> Task:
    return Task(task_id=f"e:{i}", question="q", db=DB, gold_sql=sql, sds=sds)


def test_counts_questions_per_bucket_and_constructs():
    tasks = [
        _task(0, "SELECT count(*) FROM tickets", 5),
        _task(
            1,
            "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(l) WHERE l.type = 'blocks'",
            14,
        ),
        _task(2, "WITH m AS (SELECT 1 AS n) SELECT n, rank() OVER (ORDER BY n) FROM m", 20),
        _task(3, "SELECT 1 UNION SELECT 2", 25),
    ]
    console = Console(width=200, record=True)
    console.print(questions_table(tasks))
    rows = {
        line.split("│")[1].strip(): line
        for line in console.export_text().splitlines()
        if "│" in line
    }
    cells = {bucket: [c.strip() for c in line.split("│")[2:-1]] for bucket, line in rows.items()}
    # questions, unnest, typed link, window, cte, set op
    assert cells["0-12"] == ["1", "0", "0", "0", "0", "0"]
    assert cells["13-18"] == ["1", "1", "1", "0", "0", "0"]
    assert cells["19-35"] == ["2", "0", "0", "1", "1", "1"]
    assert cells["all"] == ["4", "1", "1", "1", "1", "1"]


def test_no_table_for_unrated_questions():
    assert questions_table([_task(0, "SELECT 1", None)]) is None
