"""Benchmark loaders: Spider 1.0, BIRD / BIRD mini-dev, and the embedded demo and enterprise
benchmarks.

    >>> from core.config import load_config
    >>> cfg = load_config(["benchmark=spider_dev", f"benchmark.data_dir={spider_dir}"])
    >>> bench = load_benchmark(cfg.benchmark)
    >>> len(bench.tasks), len(bench.skipped)      # the third question's database is missing
    (2, 1)

A question whose database is missing becomes a :class:`~pipelines.contracts.SkippedTask`
with the reason; it never stops the load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from omegaconf import DictConfig

from core.config import section
from eval.loaders.bird import load_bird
from eval.loaders.common import BenchmarkSpec, LoadedBenchmark, task_index
from eval.loaders.demo import load_demo
from eval.loaders.enterprise import load_enterprise
from eval.loaders.spider import load_spider
from pipelines.indexing.examples.dialect import translated_calls
from pipelines.indexing.examples.own_examples import example_files

LOADERS: dict[str, Callable[[BenchmarkSpec], LoadedBenchmark]] = {
    "spider": load_spider,
    "bird": load_bird,
    "demo": load_demo,
    "enterprise": load_enterprise,
}


def load_benchmark(
    cfg_benchmark: DictConfig | Mapping[str, Any] | BenchmarkSpec,
) -> LoadedBenchmark:
    """Load the benchmark a ``conf/benchmark`` config (or a :class:`BenchmarkSpec`) describes."""
    if isinstance(cfg_benchmark, BenchmarkSpec):
        spec = cfg_benchmark
    else:
        spec = section(cfg_benchmark, "", BenchmarkSpec)
    return on_servers(LOADERS[spec.kind](spec), spec.servers)


def on_servers(benchmark: LoadedBenchmark, servers: Mapping[str, str]) -> LoadedBenchmark:
    """``benchmark`` with the databases ``servers`` names answered from their server copies
    (documentation and own-example files kept, the SQL in a question's evidence shown in the
    server's dialect), the gold SQL still run on each file."""
    if not servers:
        return benchmark
    tasks = []
    for task in benchmark.tasks:
        location = servers.get(task.db.db_id)
        if location is not None:
            examples = next((str(f) for f in example_files(task.db) if f.is_file()), None)
            server = task.db.model_copy(
                update={"path": location, "dialect": "postgres", "examples": examples}
            )
            # the evidence's SQL, written for the file, shown in the server's dialect
            evidence = translated_calls(task.evidence, task.db.dialect, server.dialect)
            task = task.model_copy(update={"db": server, "gold_db": task.db, "evidence": evidence})
        tasks.append(task)
    return benchmark.model_copy(update={"tasks": tuple(tasks)})


__all__ = ["BenchmarkSpec", "LoadedBenchmark", "load_benchmark", "task_index"]
