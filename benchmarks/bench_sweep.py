"""Sweep throughput: many questions in flight vs one at a time, and Ray vs in-process.

    python benchmarks/bench_sweep.py [--limit 16] [--in-flight 8] [key=value ...]

Same model, same configuration, same questions (the first ``--limit`` of the fixed Spider dev
subset by default: every 9th dev question whose database exists) in three modes:

    ray, in_flight=1   one pipeline worker actor answering one question at a time
    ray, in_flight=N   the same worker with N questions in flight (the model server batches them)
    in-process, N      the same worker class called directly in this process (no Ray Data)

Each mode starts its own model server (so no mode inherits another's prompt cache) and the
server's start-up is not timed; the Ray modes include their worker actor's start-up, which is
part of what a sweep costs. The in-process mode runs without Ray: the model server is a child
process and the sandbox a thread pool. Prints questions/minute per mode and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from _load import parse_guarded  # benchmarks/_load.py
from core.config import load_config, section
from eval.loaders import load_benchmark
from eval.sweep.config import SweepSettings
from eval.sweep.driver import run_sweep
from eval.sweep.records import QuestionRecord
from eval.sweep.services import sweep_services
from eval.sweep.session import ray_session
from eval.sweep.store import RunStore
from eval.sweep.worker import SweepWorker, WorkerSettings
from models import build_client
from pipelines.contracts import Task
from pipelines.factory import build_pipeline, build_retrievers
from pipelines.sandbox import LocalSandboxPool, SandboxSettings

# A generous per-question timeout: a timed-out question would be cheap and distort the rate.
DEFAULTS = [
    "benchmark=spider_dev_sub9",
    "model=qwen2.5-coder-0.5b",
    "scaling=single_pass",
    "scaling.global_timeout_s=900",
]


def ray_mode(
    cfg, tasks: list[Task], in_flight: int, scratch: Path
) -> tuple[float, list[QuestionRecord]]:
    sweep = SweepSettings.from_cfg(cfg).model_copy(
        update={"in_flight": in_flight, "workers": 1, "progress": False}
    )
    store = RunStore.open(scratch / f"ray-{in_flight}", identity={})
    with sweep_services(cfg, sweep, storage=None) as (factory, sandbox):
        started = time.perf_counter()
        run_sweep(tasks, store=store, factory=factory, sandbox=sandbox, config=sweep)
        elapsed = time.perf_counter() - started
    frame = store.compact()
    return elapsed, [QuestionRecord.model_validate(row) for row in frame.to_dicts()]


async def in_process_mode(
    cfg, tasks: list[Task], in_flight: int
) -> tuple[float, list[QuestionRecord]]:
    """No Ray at all: the model server as a child process, sandbox threads, the same worker
    class called directly with the same number of questions in flight."""
    sweep = SweepSettings.from_cfg(cfg)
    sandbox = LocalSandboxPool.create(
        size=sweep.sandbox_actors, limits=section(cfg, "pipeline.sandbox", SandboxSettings).limits
    )
    client = build_client(cfg.model)
    try:
        cells, examples = build_retrievers(cfg)
        pipeline = build_pipeline(
            cfg, client=client, sandbox=sandbox, cell_retriever=cells, example_retriever=examples
        )
        settings = WorkerSettings(
            question_timeout_s=sweep.question_timeout_s, ves_iterations=sweep.ves_iterations
        )
        worker = SweepWorker(lambda: pipeline, sandbox, settings)
        gate = asyncio.Semaphore(in_flight)

        async def one(position: int, task: Task) -> QuestionRecord:
            async with gate:
                out = await worker({"position": [position], "task": [task.model_dump_json()]})
                return QuestionRecord.model_validate_json(out["record"][0])

        started = time.perf_counter()
        records = await asyncio.gather(*(one(i, t) for i, t in enumerate(tasks)))
        return time.perf_counter() - started, list(records)
    finally:
        client.close()
        sandbox.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument(
        "--in-flight", type=int, default=4, help="default: the model slot's n_parallel"
    )
    parser.add_argument(
        "overrides", nargs="*", help="Hydra overrides, e.g. model=qwen2.5-coder-1.5b"
    )
    args, guard = parse_guarded(parser, argv)

    cfg = load_config([*DEFAULTS, *args.overrides, "++sweep.ves_iterations=1"])
    tasks = list(load_benchmark(cfg.benchmark).tasks[: args.limit])
    console = Console(width=120)
    console.print(
        f"{cfg.benchmark.name} first {len(tasks)} questions · model {cfg.model.name} · scaling "
        f"strategy={cfg.scaling.strategy} · {os.cpu_count()} CPUs · "
        f"{platform.processor() or platform.machine()} · "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    modes: dict[str, tuple[float, list[QuestionRecord]]] = {}
    guard.before()
    with tempfile.TemporaryDirectory() as scratch, ray_session(SweepSettings.from_cfg(cfg).ray):
        modes["ray, 1 in flight"] = ray_mode(cfg, tasks, 1, Path(scratch))
        modes[f"ray, {args.in_flight} in flight"] = ray_mode(
            cfg, tasks, args.in_flight, Path(scratch)
        )
    modes[f"in-process, {args.in_flight} in flight"] = asyncio.run(
        in_process_mode(cfg, tasks, args.in_flight)
    )

    guard.after()  # exit 3 before the table when other processes loaded the machine
    if guard.banner:
        console.print(guard.banner)
    table = Table(title="sweep throughput")
    for column in (
        "mode",
        "seconds",
        "questions/min",
        "vs 1 in flight",
        "EX (BIRD)",
        "tokens/question",
        "degraded",
    ):
        table.add_column(column, justify="left" if column == "mode" else "right")
    base_rate = None
    for mode, (elapsed, records) in modes.items():
        rate = 60 * len(records) / elapsed
        base_rate = base_rate or rate
        scored = [r.ex_bird for r in records if r.ex_bird is not None]
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in records) / max(len(records), 1)
        table.add_row(
            mode,
            f"{elapsed:.1f}",
            f"{rate:.1f}",
            f"{rate / base_rate:.2f}x",
            f"{sum(scored) / len(scored):.3f}" if scored else "–",
            f"{tokens:.0f}",
            str(sum(r.degraded for r in records)),
        )
    console.print(table)
    console.print(
        f"load average at the end: {os.getloadavg()[0]:.1f} (other processes share these CPUs)"
    )
    ray_n = modes[f"ray, {args.in_flight} in flight"][0]
    local_n = modes[f"in-process, {args.in_flight} in flight"][0]
    console.print(
        f"Ray overhead at {args.in_flight} in flight: {ray_n - local_n:+.1f} s "
        f"({ray_n / local_n:.2f}x in-process wall time)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
