"""EX, LLM calls, tokens and seconds per question: the full pipeline against single-pass greedy
and self-consistency (as many samples as the pipeline generated), side by side in one run.

    python benchmarks/bench_pipeline_vs_baselines.py --limit 12                 # CPU, 1.5B, cpu_small
    python benchmarks/bench_pipeline_vs_baselines.py --limit 108 --pipeline scaling=default pipeline=default

Questions: the fixed Spider dev subset (every 9th question whose database exists),
first ``--limit`` of them. One model server is shared by every configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from _load import parse_guarded  # benchmarks/_load.py

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


async def run_config(name, cfg, tasks, client, sandbox, concurrency):
    from pipelines.factory import build_pipeline, build_retrievers

    cells, examples = build_retrievers(cfg)
    pipeline = build_pipeline(
        cfg, client=client, sandbox=sandbox, cell_retriever=cells, example_retriever=examples
    )
    gate = asyncio.Semaphore(concurrency)

    async def one(task):
        async with gate:
            return await pipeline.answer(task)

    started = time.monotonic()
    predictions = await asyncio.gather(*(one(t) for t in tasks))
    await pipeline.aclose()
    return name, predictions, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument(
        "--concurrency", type=int, default=2, help="questions in flight per configuration"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="global timeout per question for every configuration (a busy machine needs more)",
    )
    parser.add_argument(
        "--pipeline",
        nargs="*",
        default=["scaling=cpu_small", "pipeline=cpu_small"],
        help="Hydra overrides of the full pipeline's configuration",
    )
    args, guard = parse_guarded(parser)

    import models
    from core.config import load_config, section
    from eval.grading.scoring import score_predictions
    from eval.loaders import load_benchmark
    from pipelines.sandbox import Sandbox, SandboxSettings

    common = [
        f"model={args.model}",
        "benchmark=spider_dev_sub9",
        f"benchmark.limit={args.limit}",
        "pipeline.trace.directory=${paths.runs}/bench_traces",
    ]
    if args.timeout:
        common.append(f"scaling.global_timeout_s={args.timeout}")
    base = load_config(common)
    benchmark = load_benchmark(base.benchmark)
    tasks = list(benchmark.tasks)
    client = models.build_client(base.model)
    sandbox = Sandbox(limits=section(base, "pipeline.sandbox", SandboxSettings).limits)

    async def measure():
        from models.types import ChatMessage, ChatRequest

        # Start the model server before any clock runs: the pipelines' timeouts are for answering.
        await client.chat(
            ChatRequest(messages=(ChatMessage(role="user", content="SELECT 1"),), max_tokens=1),
            role="generator",
        )
        full = await run_config(
            "pipeline",
            load_config(common + args.pipeline),
            tasks,
            client,
            sandbox,
            args.concurrency,
        )
        width = max(1, round(statistics.mean(len(p.candidates) for p in full[1])))
        greedy = await run_config(
            "single-pass greedy",
            load_config(common + ["scaling=single_pass"]),
            tasks,
            client,
            sandbox,
            args.concurrency,
        )
        vote = await run_config(
            f"self-consistency x{width}",
            load_config(common + ["scaling=self_consistency", f"scaling.k={{icl/direct:{width}}}"]),
            tasks,
            client,
            sandbox,
            args.concurrency,
        )
        await client.aclose()
        return [greedy, vote, full]

    rows = []
    guard.before()
    try:
        for name, predictions, wall in asyncio.run(measure()):
            report = score_predictions(benchmark, {p.task_id: p.sql for p in predictions})
            n = len(predictions)
            rows.append(
                (
                    name,
                    report.overall.ex_bird,
                    report.overall.ex_spider,
                    sum(p.usage.calls for p in predictions) / n,
                    sum(p.usage.total_tokens for p in predictions) / n,
                    sum(p.latency_s for p in predictions) / n,
                    wall / n,
                    sum(p.degraded for p in predictions) / n,
                )
            )
    finally:
        sandbox.close()
    guard.after()  # exit 3 before the table when other processes loaded the machine
    if guard.banner:
        print(guard.banner)
    print(
        f"\nSpider dev sub9, first {len(tasks)} questions, model {args.model}, pipeline: {' '.join(args.pipeline)}"
    )
    print(
        f"{'configuration':<24} {'EX(bird)':>8} {'EX(spider)':>10} {'calls/q':>8} {'tokens/q':>9} "
        f"{'latency/q':>9} {'wall s/q':>8} {'degraded':>8}"
    )
    for name, ex_b, ex_s, calls, tokens, lat, wall, degraded in rows:
        print(
            f"{name:<24} {ex_b:>8.3f} {ex_s:>10.3f} {calls:>8.1f} {tokens:>9.0f} {lat:>9.1f} {wall:>8.1f} "
            f"{degraded:>8.2f}"
        )


if __name__ == "__main__":
    main()
