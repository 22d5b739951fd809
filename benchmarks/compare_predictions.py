"""Whether two runs answered the same questions with the same SQL. No model runs.

    python benchmarks/compare_predictions.py RUN_DIR_A RUN_DIR_B

A refactoring is checked by replaying one response cache through the code before and after it
(``scale-analytics eval ... experiment.name=NAME`` with the same ``model.response_cache``, every
request found there): the predictions must be identical. Per question it compares the SQL, the
execution hash, the producer and the step that answered; prints the count of identical
questions, each that differs (task id and what), and the questions only one run answered.
Exit status 1 when any question differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

from eval.sweep.store import read_predictions

COMPARED = ("sql", "exec_hash", "producer", "answered_by")


def load(run_dir: Path) -> pl.DataFrame:
    """The run's finished questions (an interrupted run's too), each once."""
    return read_predictions(run_dir).select("task_id", *COMPARED)


def differences(a: pl.DataFrame, b: pl.DataFrame) -> list[tuple[str, str, object, object]]:
    """``(task_id, column, a's value, b's value)`` for every compared column that differs."""
    joined = a.join(b, on="task_id", suffix="_b")
    found = []
    for row in joined.iter_rows(named=True):
        for column in COMPARED:
            if row[column] != row[f"{column}_b"]:
                found.append((row["task_id"], column, row[column], row[f"{column}_b"]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    both = set(a["task_id"]) & set(b["task_id"])
    found = differences(a, b)
    differing = {task for task, *_ in found}
    print(f"{len(both) - len(differing)}/{len(both)} questions identical ({', '.join(COMPARED)})")
    for task, column, left, right in found:
        print(f"  {task} {column}: {left!r} -> {right!r}")
    for name, only in (("a", set(a["task_id"]) - both), ("b", set(b["task_id"]) - both)):
        if only:
            print(f"  only in {name}: {len(only)} ({', '.join(sorted(only)[:5])}…)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
