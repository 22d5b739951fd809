"""Schema linking (``pipelines/schema/linking.py``): does the focused schema keep what the gold
SQL uses, and how much smaller is the prompt? No model is needed.

    python benchmarks/bench_schema_linking.py [benchmark=demo benchmark.stride=1] [--no-cells]

For every question of the benchmark (any Hydra overrides select it; default: all 70 claims
questions), prints per split of the questions (``tuning``: even positions, ``held-out``: odd):

- every gold table kept: share of questions whose gold SQL's tables are all in the focus;
- gold columns kept: share of the gold SQL's column references whose table is kept;
- tables kept (mean), and the schema prompt's estimated tokens focused and whole (the reference
  schema the generators see, ``pipeline.single_pass`` settings: DDL, column notes, example rows);
- with ``--misses``, each question that lost a gold table and what was kept.

Cell-value hits come from the L0 cell index when it is built (``scale-analytics index``), as in
the pipelines; ``--no-cells`` measures without them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

import sqlglot
from sqlglot import exp

from _load import LoadGuard, add_load_arguments  # benchmarks/_load.py
from core.config import load_config, section
from eval.loaders import load_benchmark
from pipelines.factory import build_retrievers
from pipelines.indexing.ngrams import question_ngrams
from pipelines.sandbox import Sandbox
from pipelines.schema import introspect, join_graph, token_size
from pipelines.schema.linking import link_schema
from pipelines.schema.reference import reference_schema
from pipelines.settings import PipelineSettings


def gold_references(sql: str, dialect: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The gold SQL's tables, and its qualified column references ``(table, column)``."""
    tree = sqlglot.parse_one(sql, read=dialect)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    tables = {t.name.lower() for t in tree.find_all(exp.Table)} - ctes
    aliases = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
    columns = set()
    for column in tree.find_all(exp.Column):
        owner = aliases.get(column.table.lower()) if column.table else None
        if owner is None and len(tables) == 1:
            owner = next(iter(tables))
        if owner:
            columns.add((owner, column.name.lower()))
    return tables, columns


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("overrides", nargs="*", help="Hydra overrides (default: the claims 70)")
    parser.add_argument("--no-cells", action="store_true")
    parser.add_argument("--misses", action="store_true")
    add_load_arguments(parser)
    args = parser.parse_args()
    guard = LoadGuard.from_args(args)
    guard.before()
    cfg = load_config(args.overrides or ["benchmark=demo", "benchmark.stride=1"])
    settings = section(cfg, "pipeline", PipelineSettings)
    focus = settings.focus
    bench = load_benchmark(cfg.benchmark)
    cells, _ = (None, None) if args.no_cells else build_retrievers(cfg)
    sandbox = Sandbox()
    views, blocks, graphs = {}, {}, {}
    rows = {"tuning": [], "held-out": []}
    for i, task in enumerate(bench.tasks):
        db = task.db
        if db.path not in views:
            views[db.path] = introspect(db, 3)
            graphs[db.path] = join_graph(views[db.path])
            blocks[db.path] = await reference_schema(
                sandbox,
                db,
                sample_rows=settings.single_pass.sample_rows,
                column_notes=settings.single_pass.column_notes,
            )
        view, reference = views[db.path], blocks[db.path]
        hits = ()
        if cells is not None:
            try:
                phrases = question_ngrams(f"{task.question} {task.evidence}".strip())
                hits = cells.search_many(
                    db.db_id,
                    phrases,
                    k=settings.understanding.cell_k,
                    threshold=settings.understanding.cell_threshold,
                )
            except Exception as exc:  # noqa: BLE001 - an unindexed database: measured without
                print(f"cells unavailable for {db.db_id}: {exc}", file=sys.stderr)
                cells = None
        linked = link_schema(
            view,
            task.question,
            task.evidence,
            hits,
            keep_ratio=focus.keep_ratio,
            max_tables=focus.max_tables,
            graph=graphs[db.path],
        )
        gold_tables, gold_columns = gold_references(task.gold_sql, db.dialect)
        kept = {t.lower() for t in linked.tables}
        rows["tuning" if i % 2 == 0 else "held-out"].append(
            (
                gold_tables <= kept,
                sum(t in kept for t, _ in gold_columns),
                len(gold_columns),
                len(linked.tables),
                token_size(reference.text(linked.tables)),
                token_size(reference.text()),
            )
        )
        if args.misses and not gold_tables <= kept:
            print(
                f"[{task.task_id}] {task.question}\n  gold {sorted(gold_tables)} kept {sorted(kept)}"
            )
    guard.after()
    print(f"{bench.name}: {len(bench.tasks)} questions, cells {'off' if cells is None else 'on'}")
    print(
        "split      questions  all gold tables  gold columns  tables kept  tokens focused / whole"
    )
    for name, got in (*rows.items(), ("all", rows["tuning"] + rows["held-out"])):
        if not got:
            continue
        n = len(got)
        print(
            f"{name:<10} {n:>9}  {sum(r[0] for r in got) / n:>15.3f}  "
            f"{sum(r[1] for r in got) / max(1, sum(r[2] for r in got)):>12.3f}  "
            f"{statistics.mean(r[3] for r in got):>11.1f}  "
            f"{statistics.mean(r[4] for r in got):>8.0f} / {statistics.mean(r[5] for r in got):.0f}"
        )
    print(guard.banner or "load ok")


if __name__ == "__main__":
    asyncio.run(main())
