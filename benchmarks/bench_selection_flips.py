"""Which step of the adaptive pipeline turned a right greedy answer wrong, or a wrong one right?

    python benchmarks/bench_selection_flips.py RUN_DIR [RUN_DIR ...]

RUN_DIR is a finished ``eval`` run of the adaptive pipeline (its ``predictions.parquet``). Each
question's pool keeps every candidate with its producer and correctness; the greedy candidate
(producer ``first_wave/greedy``) is what single pass with the same prompt would have answered.
Printed per step that answered (``answered_by``: first_wave, fix, widen, likelihood, ...):
questions, right, and against greedy — kept right, lost (greedy right, answer wrong), won
(greedy wrong, answer right), both wrong; and whether a right answer was in the pool. A step
whose losses outnumber its wins does not pay for itself on that run. No model runs.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl

from eval.sweep.store import read_predictions


def greedy_right(pool: list[dict]) -> bool | None:
    """Whether the greedy candidate was right (None: the run has no greedy candidate)."""
    for c in pool:
        if c["producer"].endswith("/greedy"):
            return bool(c["correct_bird"])
    return None


def flips(frame: pl.DataFrame) -> dict[str, Counter]:
    by_step: dict[str, Counter] = defaultdict(Counter)
    for row in frame.iter_rows(named=True):
        pool = list(row["candidates"] or ())
        step = row["answered_by"] or "(none)"
        right = bool(row["ex_bird"])
        greedy = greedy_right(pool)
        counts = by_step[step]
        counts["questions"] += 1
        counts["right"] += right
        counts["in pool"] += any(c["correct_bird"] for c in pool)
        if greedy is None:
            counts["no greedy"] += 1
        elif greedy and right:
            counts["kept"] += 1
        elif greedy:
            counts["lost"] += 1
        elif right:
            counts["won"] += 1
        else:
            counts["both wrong"] += 1
    return by_step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", type=Path, nargs="+")
    args = parser.parse_args()
    columns = ("questions", "right", "kept", "lost", "won", "both wrong", "in pool")
    for run_dir in args.run_dirs:
        frame = read_predictions(run_dir)
        by_step = flips(frame)
        total: Counter = sum(by_step.values(), Counter())
        print(f"\n{run_dir.name}: {frame.height} questions")
        print(f"{'answered by':<12}" + "".join(f"{c:>11}" for c in columns))
        for step, counts in sorted(by_step.items(), key=lambda kv: -kv[1]["questions"]):
            print(f"{step:<12}" + "".join(f"{counts[c]:>11}" for c in columns))
        print(f"{'all':<12}" + "".join(f"{total[c]:>11}" for c in columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
