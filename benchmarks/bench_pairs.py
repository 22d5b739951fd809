"""Every pair of configurations compared question by question, under each EX semantics, with
paired bootstrap intervals (``eval/metrics/bootstrap.py``: 2,000 resamples, seed 0, 95 %). No
model runs.

    python benchmarks/bench_pairs.py single_pass=RUN_DIR adaptive=RUN_DIR agentic=RUN_DIR
    python benchmarks/bench_pairs.py postgres=RUN_DIR sqlite=RUN_DIR --half 1 --questions
    python benchmarks/bench_pairs.py adaptive=RUN_DIR+RUN_DIR single_pass=RUN_DIR

Each pair is compared over the questions both runs scored (``eval/reporting/accuracy.py``:
ungraded questions count as wrong), so runs that grew over different slices compare on what they
share; the row says how many. A difference whose interval excludes 0 is marked ``*``: the
benchmark tells those two configurations apart on these questions. ``--half K`` keeps the
questions of one half of a split benchmark (task index ``% --stride == K``, as
``benchmarks/bench_halves.py`` reads them); ``--questions`` lists, per pair, the questions each
configuration answers right and the other not (BIRD semantics).
"""

from __future__ import annotations

import argparse
import itertools

import polars as pl

from eval.metrics.bootstrap import paired_difference
from eval.reporting.accuracy import SEMANTICS, question_verdicts
from eval.sweep.store import read_answers


def pair_rows(frames: dict[str, pl.DataFrame]) -> list[str]:
    """One Markdown row per pair of configurations: questions shared, then the EX difference
    (first − second) with its interval under each semantics."""
    verdicts = {
        name: {s: question_verdicts(frame, s) for s in SEMANTICS} for name, frame in frames.items()
    }
    rows = []
    for first, second in itertools.combinations(frames, 2):
        cells = []
        for semantics in SEMANTICS:
            mine = {q: bool(v) for q, v in verdicts[first][semantics].items() if v is not None}
            theirs = {q: bool(v) for q, v in verdicts[second][semantics].items() if v is not None}
            ci = paired_difference(mine, theirs)
            cells.append("—" if ci is None else f"{ci}{' *' if ci.excludes_zero else ''}")
        shared = len(verdicts[first][SEMANTICS[0]].keys() & verdicts[second][SEMANTICS[0]].keys())
        rows.append(f"| {first} − {second} | {shared} | " + " | ".join(cells) + " |")
    return rows


def differing(frames: dict[str, pl.DataFrame]) -> list[str]:
    """Per pair, the questions right in one configuration only (the first semantics)."""
    verdicts = {name: question_verdicts(frame, SEMANTICS[0]) for name, frame in frames.items()}
    lines = []
    for first, second in itertools.combinations(frames, 2):
        shared = verdicts[first].keys() & verdicts[second].keys()
        for winner, loser in ((first, second), (second, first)):
            won = sorted(
                (q for q in shared if verdicts[winner][q] and not verdicts[loser][q]),
                key=_index,
            )
            lines.append(f"right in {winner} only ({len(won)}): {', '.join(won) or '—'}")
    return lines


def _index(task_id: str) -> int:
    return int(task_id.rsplit(":", 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "runs",
        nargs="+",
        help="NAME=RUN_DIR, one per configuration (RUN_DIR+RUN_DIR...: its answers in several, "
        "a later directory's answer to a question replacing an earlier one's)",
    )
    parser.add_argument("--half", type=int, help="only the questions of this half (offset)")
    parser.add_argument("--stride", type=int, default=2, help="the halves' stride (default 2)")
    parser.add_argument("--questions", action="store_true", help="list the questions that differ")
    args = parser.parse_args()
    frames = {}
    for spec in args.runs:
        name, _, run_dir = spec.partition("=")
        if not run_dir:
            parser.error(f"{spec!r} is not NAME=RUN_DIR")
        frame = read_answers(run_dir)
        if args.half is not None:
            index = pl.col("task_id").str.split(":").list.last().cast(pl.Int64)
            frame = frame.filter(index % args.stride == args.half)
        frames[name] = frame
    header = " | ".join(f"Δ EX {s.removeprefix('ex_')} [95% CI]" for s in SEMANTICS)
    print(f"| pair | questions | {header} |")
    print("|---|---|" + "---|" * len(SEMANTICS))
    print("\n".join(pair_rows(frames)))
    if args.questions:
        print()
        print("\n".join(differing(frames)))


if __name__ == "__main__":
    main()
