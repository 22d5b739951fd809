"""Every pair of configurations compared question by question, under each EX semantics, with
paired bootstrap intervals (``eval/metrics/bootstrap.py``: 2,000 resamples, seed 0, 95 %). No
model runs.

    python benchmarks/bench_pairs.py single_pass=RUN_DIR adaptive=RUN_DIR agentic=RUN_DIR

Each pair is compared over the questions both runs scored (``eval/reporting/accuracy.py``:
ungraded questions count as wrong), so runs that grew over different slices compare on what they
share; the row says how many. A difference whose interval excludes 0 is marked ``*``: the
benchmark tells those two configurations apart on these questions.
"""

from __future__ import annotations

import argparse
import itertools

import polars as pl

from eval.metrics.bootstrap import paired_difference
from eval.reporting.accuracy import SEMANTICS, question_verdicts
from eval.sweep.store import read_predictions


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="NAME=RUN_DIR, one per configuration")
    args = parser.parse_args()
    frames = {}
    for spec in args.runs:
        name, _, run_dir = spec.partition("=")
        if not run_dir:
            parser.error(f"{spec!r} is not NAME=RUN_DIR")
        frames[name] = read_predictions(run_dir)
    header = " | ".join(f"Δ EX {s.removeprefix('ex_')} [95% CI]" for s in SEMANTICS)
    print(f"| pair | questions | {header} |")
    print("|---|---|" + "---|" * len(SEMANTICS))
    print("\n".join(pair_rows(frames)))


if __name__ == "__main__":
    main()
