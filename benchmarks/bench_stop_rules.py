"""What other early-stop rules would have answered, re-voted from a run where every step ran.

    python benchmarks/bench_stop_rules.py RUN_DIR [--min-votes 3 4 5] [--share 0.6 0.8 1.0]

RUN_DIR is a finished ``eval`` run of the adaptive pipeline with ``scaling.early_stop=false``
(variant ``no_early_stop``): each question's pool holds the first wave and every later step's
candidates, each with its result hash and correctness. For each rule — stop when the first wave's
top bucket holds at least ``min_votes`` votes and ``share`` of its executed answers — a question
that stops takes the first wave's majority, any other the majority of its whole pool (ties: the
greedy candidate's bucket). No model runs: it prints, per rule, the questions right and the
questions that would have gone on past the first wave.

    predictions.parquet ──► per rule: first wave's buckets ──► stop? ──► first-wave or pool vote
    ──► right / questions, widened

The predictions do not keep row counts, so the pipeline's "non-empty, not all NULL" condition on
the top bucket is not applied: a rule here can stop where the pipeline would have gone on.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from eval.sweep.store import read_predictions

FIRST_WAVE = "first_wave"


def majority_is_right(candidates: Sequence[dict]) -> bool:
    """The plain vote over the executed candidates (ties: the greedy candidate's bucket)."""
    votes: Counter[str] = Counter()
    right: dict[str, bool] = {}
    greedy = None
    for c in candidates:
        if c["error"]:
            continue
        votes[c["hash"]] += 1
        right[c["hash"]] = bool(c["correct_bird"])
        if greedy is None and c["producer"].endswith("/greedy"):
            greedy = c["hash"]
    if not votes:
        return False
    return right[max(votes, key=lambda h: (votes[h], h == greedy))]


def stops(first_wave: Sequence[dict], min_votes: int, share: float) -> bool:
    votes = Counter(c["hash"] for c in first_wave if not c["error"])
    if not votes:
        return False
    top = max(votes.values())
    return top >= min_votes and top / sum(votes.values()) >= share


def revote(pools: Sequence[Sequence[dict]], min_votes: int, share: float) -> tuple[int, int]:
    """(questions right, questions widened) under one stop rule."""
    right = widened = 0
    for pool in pools:
        first = [c for c in pool if c["producer"].startswith(FIRST_WAVE)]
        if stops(first, min_votes, share):
            right += majority_is_right(first)
        else:
            widened += 1
            right += majority_is_right(pool)
    return right, widened


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--min-votes", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--share", type=float, nargs="+", default=[0.6, 0.8, 1.0])
    args = parser.parse_args()
    frame = read_predictions(args.run_dir)
    pools = [list(p or ()) for p in frame.get_column("candidates").to_list()]
    recorded = int(frame.get_column("ex_bird").fill_null(False).sum())
    print(f"{args.run_dir.name}: {len(pools)} questions, {recorded} right as run")
    print(f"{'min votes':>9} {'share':>6} {'right':>6} {'EX':>6} {'widened':>8}")
    for min_votes in args.min_votes:
        for share in args.share:
            right, widened = revote(pools, min_votes, share)
            print(
                f"{min_votes:>9} {share:>6.2f} {right:>6} {right / len(pools):>6.3f} {widened:>8}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
