"""Time scoring all of Spider dev, gold against itself: sequential vs a process pool.

    python benchmarks/bench_scoring.py [--workers 1 2 4] [--repeat 1] [key=value ...]

Every run executes 2 queries per question (gold and "prediction") in the read-only sandbox
and must score 100% under both EX semantics on every question whose database exists; the
questions without a database (wta_1: 62) are reported as skipped. Prints one row per worker
count with wall seconds (best of ``--repeat``), the speed-up over the first row, and the
pool's fixed start-up cost (a fresh pool scoring two questions).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

from rich.console import Console
from rich.table import Table

from _load import parse_guarded  # benchmarks/_load.py
from core.config import load_config
from eval.grading.scoring import ScoreReport, score_predictions
from eval.loaders import load_benchmark


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. benchmark.stride=3")
    args, guard = parse_guarded(parser, argv)

    cfg = load_config(["benchmark=spider_dev", *args.overrides])
    bench = load_benchmark(cfg.benchmark)
    gold = {task.task_id: task.gold_sql for task in bench.tasks}
    console = Console(width=120)
    console.print(
        f"{bench.name}: {bench.total_questions} questions, {len(bench.tasks)} scored, "
        f"{len(bench.skipped)} skipped ({', '.join(sorted({s.db_id for s in bench.skipped}))}) · "
        f"{os.cpu_count()} CPUs · load {os.getloadavg()[0]:.1f} · "
        f"Python {platform.python_version()}"
    )

    table = Table(title="Spider dev, gold vs gold")
    for column in (
        "workers",
        "wall s",
        "speed-up",
        "questions/s",
        "pool start s",
        "EX BIRD",
        "EX Spider",
        "gold fails",
    ):
        table.add_column(column, justify="right")
    baseline: float | None = None
    perfect = True
    guard.before()
    for workers in args.workers:
        runs = [score_predictions(bench, gold, workers=workers) for _ in range(args.repeat)]
        best: ScoreReport = min(runs, key=lambda r: r.wall_s)
        # The fixed cost of a pool: scoring just 2 questions is almost all start-up.
        startup = score_predictions(
            bench.model_copy(update={"tasks": bench.tasks[:2]}), {}, workers=workers
        )
        baseline = baseline or best.wall_s
        perfect &= all(
            r.overall.ex_bird == r.overall.ex_spider == 1.0 and r.scored == len(bench.tasks)
            for r in runs
        )
        table.add_row(
            str(workers),
            f"{best.wall_s:.2f}",
            f"{baseline / best.wall_s:.2f}x",
            f"{len(bench.tasks) / best.wall_s:.0f}",
            f"{startup.wall_s:.2f}" if workers > 1 else "-",
            f"{100 * best.overall.ex_bird:.1f}%",
            f"{100 * best.overall.ex_spider:.1f}%",
            str(len(best.gold_failures)),
        )
    guard.after()  # exit 3 before the table when other processes loaded the machine
    if guard.banner:
        console.print(guard.banner)
    console.print(table)
    console.print(
        "gold vs gold: 100% on every question whose database exists"
        if perfect
        else "[red]gold vs gold is NOT 100%: see the per-question verdicts[/red]"
    )
    return 0 if perfect else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
