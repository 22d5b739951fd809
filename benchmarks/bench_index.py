"""L0 index benchmark: build cost, retrieval latency and retrieval quality on Spider dev.

    python benchmarks/bench_index.py [--root DIR] [--keep] [--questions N] [--executor ray|local]

Prints, in one run:
  1. build from scratch — every Spider database present plus the demo database, and the
     example index (Spider train): wall time, per-database seconds, values, size on disk;
     then a second run (nothing changed) for comparison;
  2. latency p50/p95 of CellRetriever.search (k=5) per mode and ExampleRetriever.search (k=15);
  3. cell recall@5 on Spider dev: the share of the gold SQL's string literals found among the
     top-5 cell hits of the question, per mode, for two deterministic queries:
        question  the whole question text, one search;
        ngrams    the question's word n-grams (1-3 words, bounded by content words, quoted spans
                  whole; pipelines.indexing.cell_values.ngrams), searched together, top-5 distinct values kept;
     a literal counts as found when a hit equals it (case-insensitive; for LIKE patterns, when the
     pattern is inside the hit); "indexed" is the ceiling: literals present in the index at all;
  4. example index on Spider dev (cross-database: the question's own database excluded): how often
     a top-15 (and top-1) example has the gold SQL's skeleton (sqlglot, literals and identifiers
     masked), for the deterministic question skeleton vs the raw question as the query.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("LANCEDB_LOG", "error")

from _load import parse_guarded  # benchmarks/_load.py
from core.config import load_config, section
from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder.runner import build_all
from pipelines.indexing.cell_values.ngrams import question_ngrams
from pipelines.indexing.examples.question_skeleton import EMPTY, SchemaWords, skeletonise
from pipelines.indexing.examples.sql_skeleton import sql_skeleton, string_literals
from pipelines.indexing.settings import IndexSettings
from pipelines.indexing.store import VersionedStore

if TYPE_CHECKING:  # imported after the build: lancedb loaded before Ray forks warns
    from pipelines.indexing.cell_values.cell_index import CellRetriever
    from pipelines.indexing.examples.example_index import ExampleRetriever

MODES = ("vector", "bm25", "hybrid")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def spider_databases(spider: Path) -> list[DatabaseRef]:
    refs = []
    for folder in sorted((spider / "database").iterdir()):
        path = folder / f"{folder.name}.sqlite"
        if path.is_file():
            refs.append(DatabaseRef(db_id=folder.name, path=str(path)))
    return refs


def demo_database(demo_dir: Path) -> DatabaseRef:
    from eval.demo import build_demo

    paths = build_demo(demo_dir)
    return DatabaseRef(
        db_id=paths.db_id, path=str(paths.database), description_dir=str(paths.description_dir)
    )


def bench_build(dbs: list[DatabaseRef], settings: IndexSettings) -> None:
    print(
        f"\n== build from scratch: {len(dbs)} databases + example index, executor={settings.executor} "
        f"(workers={settings.workers}, worker_cpus={settings.worker_cpus})"
    )
    started = time.perf_counter()
    reports = build_all(dbs, settings, progress=False)
    wall = time.perf_counter() - started
    by_status = defaultdict(list)
    for r in reports:
        by_status[r.status].append(r)
    dbr = [r for r in reports if r.kind == "database" and r.status == "built"]
    ex = next(r for r in reports if r.kind == "examples")
    print(
        f"wall {wall:.1f} s; statuses: "
        + ", ".join(f"{k}={len(v)}" for k, v in sorted(by_status.items()))
    )
    for r in reports:
        if r.status in ("failed", "skipped"):
            print(f"  {r.name}: {r.status}: {r.reason}")
    secs = [r.seconds for r in dbr]
    print(
        f"databases: sum of per-db build seconds {sum(secs):.1f}, p50 {pct(secs, 0.5):.2f}, "
        f"p95 {pct(secs, 0.95):.2f}, max {max(secs):.1f} ({max(dbr, key=lambda r: r.seconds).name})"
    )
    values = sum(r.counts.get("values", 0) for r in dbr)
    size = sum(r.bytes_on_disk for r in dbr)
    print(
        f"databases: {values} cell values, {size / 1e6:.1f} MB on disk "
        f"({size / max(values, 1):.0f} B/value)"
    )
    for r in dbr:
        if r.name == "claims":
            print(
                f"demo (claims): {r.counts.get('values')} values, {r.bytes_on_disk / 1e6:.1f} MB, {r.seconds:.1f} s"
            )
    print(
        f"example index: {ex.status}, {ex.counts.get('examples')} examples, "
        f"{ex.bytes_on_disk / 1e6:.1f} MB, {ex.seconds:.1f} s"
    )
    started = time.perf_counter()
    again = build_all(dbs, settings, progress=False)
    print(
        f"second run (nothing changed): wall {time.perf_counter() - started:.1f} s, "
        f"{sum(r.status == 'unchanged' for r in again)}/{len(again)} unchanged"
    )


def dev_questions(spider: Path, indexed: set[str], limit: int | None) -> list[dict]:
    questions = [q for q in json.loads((spider / "dev.json").read_text()) if q["db_id"] in indexed]
    return questions[:limit] if limit else questions


def bench_latency(
    cells: CellRetriever, examples: ExampleRetriever, questions: list[dict], n: int
) -> None:
    sample = questions[:: max(1, len(questions) // n)][:n]
    print(f"\n== latency, {len(sample)} Spider dev questions as queries (warm, one thread)")
    cells.search(sample[0]["db_id"], "warm up", mode="hybrid")
    examples.search("warm up")
    for mode in MODES:
        times = []
        for q in sample:
            t = time.perf_counter()
            cells.search(q["db_id"], q["question"], k=5, mode=mode)
            times.append((time.perf_counter() - t) * 1000)
        print(
            f"cells   {mode:<7} k=5   p50 {pct(times, 0.5):6.1f} ms   p95 {pct(times, 0.95):6.1f} ms"
        )
    times = []
    for q in sample:
        t = time.perf_counter()
        examples.search(q["question"], k=15, exclude_db=q["db_id"])
        times.append((time.perf_counter() - t) * 1000)
    print(f"examples        k=15  p50 {pct(times, 0.5):6.1f} ms   p95 {pct(times, 0.95):6.1f} ms")


def _found(literal: str, values: list[str], like: bool) -> bool:
    lit = literal.lower().strip()
    return any((lit in v.lower()) if like else (v.lower().strip() == lit) for v in values)


def indexed_values(root: str, db_id: str) -> set[str]:
    import lancedb

    version = VersionedStore(root, "databases", db_id).current_dir()
    lance_dir = version / "lance" if version else None
    if lance_dir is None or not lance_dir.exists():
        return set()
    table = lancedb.connect(str(lance_dir)).open_table("cells")
    return {v.lower().strip() for v in table.to_arrow().column("value").to_pylist()}


def bench_cell_recall(cells: CellRetriever, root: str, questions: list[dict]) -> None:
    cases = []
    for q in questions:
        for literal in string_literals(q["query"]):
            cases.append((q, literal, f"%{literal}" in q["query"] or f"{literal}%" in q["query"]))
    asked = {id(q): q for q, _, _ in cases}
    print(
        f"\n== cell recall@5 on Spider dev: {len(cases)} string literals in {len(asked)} questions"
    )
    values = {db: indexed_values(root, db) for db in {q["db_id"] for q in asked.values()}}
    ceiling = sum(_found(lit, list(values[q["db_id"]]), like) for q, lit, like in cases)
    print(f"indexed (ceiling): {ceiling / len(cases):.3f} ({ceiling}/{len(cases)})")
    for query_kind in ("question", "ngrams"):
        for mode in MODES:
            hits_by_q: dict[int, list[str]] = {}
            started = time.perf_counter()
            for key, q in asked.items():
                queries = (
                    [q["question"]] if query_kind == "question" else question_ngrams(q["question"])
                )
                hits_by_q[key] = [
                    h.value for h in cells.search_many(q["db_id"], queries, k=5, mode=mode)
                ]
            found = sum(_found(lit, hits_by_q[id(q)], like) for q, lit, like in cases)
            per_q = (time.perf_counter() - started) / len(asked) * 1000
            print(
                f"{query_kind:<8} {mode:<7} recall@5 {found / len(cases):.3f} ({found}/{len(cases)})   "
                f"{per_q:6.0f} ms/question"
            )


def bench_examples(examples: ExampleRetriever, spider: Path, questions: list[dict]) -> None:
    tables = {
        e["db_id"]: SchemaWords.from_spider_tables(e)
        for e in json.loads((spider / "tables.json").read_text())
    }
    skeleton_cache: dict[str, str | None] = {}

    def skel(sql: str) -> str | None:
        if sql not in skeleton_cache:
            skeleton_cache[sql] = sql_skeleton(sql)
        return skeleton_cache[sql]

    print(f"\n== example index on Spider dev: {len(questions)} questions, own database excluded")
    reachable = 0
    for kind in ("skeleton", "raw question"):
        top1 = top15 = 0
        for q in questions:
            gold = skel(q["query"])
            query = (
                skeletonise(q["question"], tables.get(q["db_id"], EMPTY))
                if kind == "skeleton"
                else q["question"]
            )
            hits = examples.search(query, k=15, exclude_db=q["db_id"])
            shapes = [skel(h.sql) for h in hits]
            top15 += gold is not None and gold in shapes
            top1 += gold is not None and bool(shapes) and shapes[0] == gold
        print(
            f"query={kind:<12} top-15 shares gold skeleton {top15 / len(questions):.3f}   "
            f"top-1 {top1 / len(questions):.3f}"
        )
    train = json.loads((spider / "train_spider.json").read_text())
    train_shapes = {skel(t["query"]) for t in train}
    reachable = sum(skel(q["query"]) in train_shapes for q in questions)
    print(
        f"ceiling: gold skeleton occurs anywhere in Spider train for {reachable / len(questions):.3f} of questions"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", help="index root to build into (default: a fresh temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temp index root")
    parser.add_argument(
        "--skip-build", action="store_true", help="reuse the indexes already under --root"
    )
    parser.add_argument("--questions", type=int, default=None, help="limit Spider dev questions")
    parser.add_argument("--latency-queries", type=int, default=200)
    parser.add_argument("--executor", choices=("ray", "local"), default="ray")
    args, guard = parse_guarded(parser)

    cfg = load_config([])
    spider = Path(cfg.paths.benchmarks) / "spider"
    if not (spider / "dev.json").is_file():
        print(f"Spider not found at {spider}; nothing to benchmark", file=sys.stderr)
        return 1
    root = args.root or tempfile.mkdtemp(prefix="bench_index_", dir=cfg.paths.cache)
    settings = section(cfg, "pipeline.index", IndexSettings).model_copy(
        update={"root": root, "executor": args.executor}
    )
    print(f"machine: {os.cpu_count()} CPUs; index root {root}")
    print("the sections below are figures only if the run ends without a NOT A FIGURE line")
    guard.before()
    try:
        dbs = spider_databases(spider) + [demo_database(Path(cfg.paths.demo))]
        if not args.skip_build:
            bench_build(dbs, settings)
        from pipelines.indexing.cell_values.cell_index import CellRetriever
        from pipelines.indexing.examples.example_index import ExampleRetriever

        cells, examples = CellRetriever(root), ExampleRetriever(root)
        indexed = {db.db_id for db in dbs if VersionedStore(root, "databases", db.db_id).current()}
        questions = dev_questions(spider, indexed, args.questions)
        bench_latency(cells, examples, questions, args.latency_queries)
        bench_cell_recall(cells, root, questions)
        bench_examples(examples, spider, questions)
    finally:
        if not args.root and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    guard.after()  # exit 3 when other processes loaded the machine
    print(guard.banner or "load ok: the figures above count")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
