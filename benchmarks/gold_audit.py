"""Questions of the fixed Spider dev subset whose gold answer a faithful SQL cannot match, each
checked against its database, and execution accuracy with and without them for finished runs.

    python benchmarks/gold_audit.py RUN_DIR [RUN_DIR ...]

Each entry below pairs a question with a SQL that answers it as asked; the script runs that SQL
and the gold SQL through the read-only sandbox and keeps the entry only when the benchmark would
grade the faithful answer wrong (BIRD semantics). No model runs. For each RUN_DIR (a finished
``eval`` run of the 108) it prints EX (BIRD) on all questions and on those the audit leaves.

    the subset's tasks (benchmark=spider_dev_sub9: gold SQL, database) ──► faithful SQL ║ gold
    SQL in the sandbox ──► differ? ──► per run (predictions.parquet): right / 108, right / the rest
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import polars as pl

from core.config import load_config
from eval.loaders import load_benchmark
from eval.metrics.execution import ex_bird
from eval.sweep.store import read_predictions
from pipelines.contracts import Task
from pipelines.sandbox import Sandbox


class Defect(NamedTuple):
    task_id: str
    reason: str
    faithful_sql: str  # answers the question as asked; the gold's result differs


DEFECTS = (
    Defect(
        "spider_dev:72",
        "columns in another order than the question's: right under Spider semantics only",
        "SELECT PetType, avg(pet_age), max(pet_age) FROM pets GROUP BY PetType",
    ),
    Defect(
        "spider_dev:162",
        "gold gives one count per country, not the number of countries",
        "SELECT count(*) FROM (SELECT Country FROM car_makers GROUP BY Country HAVING count(*) > 2)",
    ),
    Defect(
        "spider_dev:198",
        "AirportName is stored 'Alton ' (trailing space): gold's = 'Alton' finds nothing",
        "SELECT City, Country FROM airports WHERE trim(AirportName) = 'Alton'",
    ),
    Defect(
        "spider_dev:207",
        "flights store airport codes with a leading space (' APG'): gold's join counts 0",
        "SELECT count(*) FROM flights AS T1 JOIN airports AS T2"
        " ON trim(T1.SourceAirport) = trim(T2.AirportCode) WHERE trim(T2.City) = 'Aberdeen'",
    ),
    Defect(
        "spider_dev:252",
        "flights store airport codes with a leading space (' APG'): gold's join finds nothing",
        "SELECT T1.FlightNo FROM flights AS T1 JOIN airports AS T2"
        " ON trim(T1.SourceAirport) = trim(T2.AirportCode) WHERE trim(T2.City) = 'Aberdeen'",
    ),
    Defect(
        "spider_dev:387",
        "gold's literal is lower case; SQLite's != is case-sensitive, so it excludes no teacher",
        "SELECT Name FROM teacher WHERE Hometown != 'Little Lever Urban District'",
    ),
    Defect(
        "spider_dev:396",
        "every hometown has one teacher: gold's LIMIT 1 picks one of a 7-way tie",
        "SELECT Hometown FROM teacher GROUP BY Hometown HAVING count(*) = "
        "(SELECT max(n) FROM (SELECT count(*) AS n FROM teacher GROUP BY Hometown))",
    ),
    Defect(
        "spider_dev:584",
        "gold's 'haiti' is lower case; the stored country is 'Haiti'",
        "SELECT T1.first_name FROM students AS T1 JOIN addresses AS T2"
        " ON T1.permanent_address_id = T2.address_id"
        " WHERE T2.country = 'Haiti' OR T1.cell_mobile_number = '09700166582'",
    ),
    Defect(
        "spider_dev:755",
        "gold selects every column of the join (SELECT *) for 'which countries'",
        "SELECT DISTINCT T1.Name FROM country AS T1 JOIN countrylanguage AS T2"
        " ON T1.Code = T2.CountryCode"
        " WHERE T2.Language IN ('English', 'Dutch') AND T2.IsOfficial = 'T'",
    ),
    Defect(
        "spider_dev:818",
        "gold gives a (count, max) row per country, not a total number",
        "SELECT count(*) FROM countrylanguage AS T1 WHERE Language = 'Spanish' AND Percentage = "
        "(SELECT max(Percentage) FROM countrylanguage AS T2 WHERE T2.CountryCode = T1.CountryCode)",
    ),
    Defect(
        "spider_dev:845",
        "every conductor conducts one orchestra: gold's LIMIT 1 picks one of a 12-way tie",
        "SELECT T1.Name FROM conductor AS T1 JOIN orchestra AS T2"
        " ON T1.Conductor_ID = T2.Conductor_ID GROUP BY T1.Conductor_ID HAVING count(*) = "
        "(SELECT max(n) FROM (SELECT count(*) AS n FROM orchestra GROUP BY Conductor_ID))",
    ),
    Defect(
        "spider_dev:944",
        "gold joins without ON (a cross product): every professional qualifies",
        "SELECT DISTINCT T1.first_name, T1.last_name FROM Professionals AS T1"
        " JOIN Treatments AS T2 ON T1.professional_id = T2.professional_id"
        " WHERE T2.cost_of_treatment < (SELECT avg(cost_of_treatment) FROM Treatments)",
    ),
)


def confirmed(tasks: Sequence[Task], defects: tuple[Defect, ...] = DEFECTS) -> list[Defect]:
    """The defects whose faithful SQL runs and is graded wrong against the gold of their task."""
    by_id = {task.task_id: task for task in tasks}
    out = []
    with Sandbox(timeout_s=30, row_cap=100_000) as sandbox:
        for defect in defects:
            task = by_id.get(defect.task_id)
            if task is None or task.gold_sql is None:
                print(f"  {defect.task_id}: no such task with a gold SQL")
                continue
            faithful = sandbox.execute(defect.faithful_sql, task.db)
            expected = sandbox.execute(task.gold_sql, task.db)
            if not faithful.ok:
                print(f"  {defect.task_id}: faithful SQL fails ({faithful.error}); not counted")
            elif ex_bird(faithful, expected):
                print(f"  {defect.task_id}: faithful SQL matches the gold; not counted")
            else:
                print(
                    f"  {defect.task_id} ({task.db.db_id}): {defect.reason} "
                    f"[gold {expected.row_count} rows, faithful {faithful.row_count}]"
                )
                out.append(defect)
    return out


class Accuracy(NamedTuple):
    right: int
    graded: int
    audited_right: int
    audited: int


def accuracy(frame: pl.DataFrame, defects: set[str]) -> Accuracy:
    """Right answers (BIRD semantics) on every graded question and on those not in ``defects``."""
    graded = frame.filter(pl.col("ex_bird").is_not_null())
    kept = graded.filter(~pl.col("task_id").is_in(sorted(defects)))
    return Accuracy(
        right=int(graded.get_column("ex_bird").sum()),
        graded=graded.height,
        audited_right=int(kept.get_column("ex_bird").sum()),
        audited=kept.height,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="finished eval run directories")
    args = parser.parse_args()
    frames = {run: read_predictions(run) for run in args.runs}
    tasks = load_benchmark(load_config(["benchmark=spider_dev_sub9"]).benchmark).tasks
    print("defects confirmed against the Spider dev databases:")
    defects = {d.task_id for d in confirmed(tasks)}
    print(f"\n{'run':<60} {'EX all':>14} {'EX audited':>14} {'defects right':>14}")
    for run, frame in frames.items():
        a = accuracy(frame, defects)
        print(
            f"{str(run):<60} {a.right:>3}/{a.graded} {a.right / max(a.graded, 1):.3f}"
            f" {a.audited_right:>3}/{a.audited} {a.audited_right / max(a.audited, 1):.3f}"
            f" {a.right - a.audited_right:>8}/{a.graded - a.audited}"
        )


if __name__ == "__main__":
    main()
