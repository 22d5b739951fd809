"""The local model server under Ray's default worker priority (nice 15: the ``LocalModelServer``
actor is a Ray worker and the server its child) against nice 0, set through
``RAY_worker_niceness``: the same eval in alternated rounds. Runs the model.

    python benchmarks/bench_worker_niceness.py --rounds 2 [eval overrides ...]

The default job is `make demo`'s single pass on every 12th claims question (6 questions), no
response cache, a fresh run directory per invocation: every question's focused schema is
evaluated by the model, which is where the two OpenMP threads of llama.cpp meet Ray's own
processes. Per invocation: its wall seconds, mean and p50 seconds per question, and prompt
tokens per question (the same work in both arms); then each arm's means and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from eval.sweep.store import read_predictions

JOB = ["experiment=demo", "benchmark.stride=12", "experiment.only=single_pass"]


def run_once(niceness: int, name: str, overrides: list[str], runs: Path) -> dict[str, float]:
    env = os.environ | {"RAY_worker_niceness": str(niceness)}
    command = [
        str(Path(sys.executable).parent / "scale-analytics"),
        "eval",
        *JOB,
        f"experiment.name={name}",
        "model.response_cache=null",
        *overrides,
    ]
    started = time.monotonic()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - started
    frame = pl.concat([read_predictions(p.parent) for p in (runs / name).glob("*/run.json")])
    return {
        "wall_s": wall,
        "mean_s": frame["latency_s"].mean(),
        "p50_s": frame["latency_s"].median(),
        "prompt_tokens": frame["prompt_tokens"].mean(),
        "right": int(frame["ex_bird"].fill_null(False).sum()),
        "questions": frame.height,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--runs", type=Path, default=Path(os.environ.get("SCALE_ANALYTICS_RUNS", "runs"))
    )
    args, overrides = parser.parse_known_args()
    stamp = time.strftime("%Y%m%d%H%M")
    results: dict[int, list[dict[str, float]]] = {15: [], 0: []}
    print("| round | niceness | wall s | s/question mean / p50 | prompt tokens/q | right |")
    print("|---|---|---|---|---|---|")
    for round_ in range(1, args.rounds + 1):
        for niceness in (15, 0):
            r = run_once(niceness, f"nice{niceness}_{stamp}_r{round_}", overrides, args.runs)
            results[niceness].append(r)
            print(
                f"| {round_} | {niceness} | {r['wall_s']:.0f} | {r['mean_s']:.1f} / {r['p50_s']:.1f}"
                f" | {r['prompt_tokens']:.0f} | {r['right']}/{r['questions']} |",
                flush=True,
            )
    slow, fast = (statistics.mean(x["mean_s"] for x in results[n]) for n in (15, 0))
    wall15, wall0 = (statistics.mean(x["wall_s"] for x in results[n]) for n in (15, 0))
    print(f"\nmean s/question: nice 15 {slow:.1f}, nice 0 {fast:.1f} ({slow / fast:.2f}x)")
    print(f"mean wall s: nice 15 {wall15:.0f}, nice 0 {wall0:.0f} ({wall15 / wall0:.2f}x)")


if __name__ == "__main__":
    main()
