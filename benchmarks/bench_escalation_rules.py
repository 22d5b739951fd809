"""What two escalation rules of the adaptive pipeline would have changed on recorded runs, replayed
from their predictions (candidate pools, per-candidate correctness, step timings). No model runs.

    python benchmarks/bench_escalation_rules.py RUN_DIR [RUN_DIR ...] \\
        [--widen-min-votes 2] [--escalate-within-s 45]

For each question of each run: the widening is left out where the pool before it has no executed
answer shared by ``--widen-min-votes`` candidates (``scaling.widen_min_votes``), and
every step after the first wave that would start past ``--escalate-within-s`` seconds
(``scaling.escalate_within_s``) is left out with the steps after it. A question that
loses a step is answered by the vote over the candidates of the steps before it (largest
executed answer; a tie goes to the greedy candidate's answer, as ``select: vote`` does), and its
seconds end where the first left-out step would have started. Printed per run: EX recorded and
replayed, mean seconds per question recorded and replayed, and every question whose answer
changes.

The replay is an estimate in three places: where the recorded run selected by likelihood (the
replay votes); where a tie is between an empty and a non-empty answer (the pipeline prefers rows;
predictions do not say which answer is empty, so the replay takes the greedy candidate's answer,
then the first answer in pool order, as the pipeline does next); and where a left-out step would
have been followed by another step that ran.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from eval.sweep.store import read_predictions

FIRST_WAVE = "first_wave"


def vote(pool: list[dict]) -> tuple[bool, int]:
    """Whether the vote over ``pool`` is right, and the size of its largest executed answer."""
    answered = [c for c in pool if not c["error"]]
    sizes = Counter(c["hash"] for c in answered)
    if not sizes:
        return False, 0
    largest = max(sizes.values())
    tied = [h for h, n in sizes.items() if n == largest]
    greedy = next((c for c in pool if c["producer"].endswith("/greedy")), None)
    chosen = greedy["hash"] if greedy and greedy["hash"] in tied else tied[0]
    return next(c["correct_bird"] for c in answered if c["hash"] == chosen), largest


def replay(row: dict, widen_min_votes: int, escalate_within_s: float | None) -> tuple[bool, float]:
    """The replayed answer's correctness and seconds of one recorded question."""
    steps = row["steps"]
    clock = row["latency_s"] - sum(s["seconds"] for s in steps)  # before the first step
    done: list[str] = []
    for step in steps:
        name = step["step"]
        late = escalate_within_s is not None and name != FIRST_WAVE and clock >= escalate_within_s
        if name == "widen" and not late:
            late = vote(_pool(row, done))[1] < widen_min_votes
        if late:
            return vote(_pool(row, done))[0], clock
        done.append(name)
        clock += step["seconds"]
    return bool(row["ex_bird"]), row["latency_s"]


def _pool(row: dict, steps: list[str]) -> list[dict]:
    prefixes = tuple(f"{s}/" for s in steps)
    kept = [c for c in row["candidates"] if c["producer"].startswith(prefixes)]
    # repairs without an LLM keep their step's name; a fixer's candidates are named by the agent
    if "fix" in steps:
        kept += [c for c in row["candidates"] if "fixer" in c["producer"]]
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--widen-min-votes", type=int, default=2)
    parser.add_argument("--escalate-within-s", type=float, default=None)
    args = parser.parse_args()
    for run in args.runs:
        frame = read_predictions(run)
        recorded = replayed = 0
        seconds = []
        changes = []
        for row in frame.iter_rows(named=True):
            right, spent = replay(row, args.widen_min_votes, args.escalate_within_s)
            recorded += bool(row["ex_bird"])
            replayed += right
            seconds.append(spent)
            if right != bool(row["ex_bird"]) or spent < row["latency_s"]:
                changes.append(
                    f"  #{row['position']} {row['difficulty']}: "
                    f"{int(row['ex_bird'])} -> {int(right)}, {row['latency_s']:.0f} -> {spent:.0f} s"
                )
        n = frame.height
        print(
            f"{run}: EX {recorded}/{n} -> {replayed}/{n}; "
            f"s/question {frame['latency_s'].mean():.1f} -> {sum(seconds) / n:.1f}"
        )
        print("\n".join(changes))


if __name__ == "__main__":
    main()
