"""How close must a solved example from another database be to show the answer's structure?

    python benchmarks/bench_example_threshold.py [benchmark=spider_dev_sub9 ...] [--k 5]

For each question of the benchmark(s), the k examples the example index returns for its
skeleton (other databases only, as the pipelines ask) are compared with the gold SQL: an example
"has the structure" when its SQL skeleton (``pipelines.indexing.examples.sql_skeleton``: identifiers and
literals masked) equals the gold's. Printed per band of skeleton cosine similarity: how many
examples fall there and the share that have the structure. An example below the band where that
share falls under one half is more likely to mislead than to help; the pipelines'
``pipeline.understanding.example_threshold`` is set from this table
(docs/benchmarks.md#example-threshold). No model is needed; the example index must be built
(``scale-analytics index``).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from _load import parse_guarded  # benchmarks/_load.py
from core.config import load_config
from eval.loaders import load_benchmark
from pipelines.factory import build_retrievers
from pipelines.indexing.examples.question_skeleton import SchemaWords, skeletonise
from pipelines.indexing.examples.sql_skeleton import sql_skeleton
from pipelines.schema import introspect

BANDS = (0.0, 0.7, 0.8, 0.85, 0.9, 0.95, 1.01)


def measure(overrides: list[str], k: int) -> tuple[str, dict[float, list[bool]]]:
    cfg = load_config(overrides)
    bench = load_benchmark(cfg.benchmark)
    _, examples = build_retrievers(cfg)
    if examples is None:
        raise SystemExit("no example index: run `scale-analytics index` first")
    words: dict[str, SchemaWords] = {}
    bands: dict[float, list[bool]] = defaultdict(list)
    for task in bench.tasks:
        if task.db.path not in words:
            words[task.db.path] = SchemaWords.from_view(introspect(task.db, 0))
        gold = sql_skeleton(task.gold_sql)
        skeleton = skeletonise(task.question, words[task.db.path])
        for hit in examples.search(skeleton, k=k, exclude_db=task.db.db_id):
            low = max(b for b in BANDS if b <= hit.score)
            bands[low].append(gold is not None and sql_skeleton(hit.sql) == gold)
    return f"{bench.name} ({len(bench.tasks)} questions)", bands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("overrides", nargs="*")
    parser.add_argument("--k", type=int, default=5)
    args, guard = parse_guarded(parser)
    guard.before()
    sets = (
        [args.overrides]
        if args.overrides
        else [
            ["benchmark=spider_dev_sub9"],
            ["benchmark=demo", "benchmark.stride=2", "benchmark.offset=0"],
        ]
    )
    tables = [measure(overrides, args.k) for overrides in sets]
    guard.after()
    for name, bands in tables:
        print(f"\n{name}, top {args.k} examples per question")
        print("cosine band   examples  same structure")
        for low, high in zip(BANDS, BANDS[1:]):
            got = bands.get(low, [])
            share = f"{sum(got) / len(got):.2f}" if got else "-"
            print(f"[{low:.2f}, {min(high, 1.0):.2f})  {len(got):>8}  {share:>14}")
    print(guard.banner or "load ok")


if __name__ == "__main__":
    main()
