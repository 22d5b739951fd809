"""Schema linking (``pipelines/schema/linking.py``): does the focused schema keep what the gold
SQL uses, and how much smaller is the prompt? No model is needed.

    python benchmarks/bench_schema_linking.py [benchmark=demo benchmark.stride=1] [--no-cells]

For every question of the benchmark (any Hydra overrides select it; default: all 70 claims
questions), prints per half (``even`` and ``odd`` 0-based positions in the benchmark, as
``benchmark.stride=2`` with ``offset=0`` / ``1`` select them: on claims the tuning and the
held-out half):

- every gold table kept: share of questions whose gold SQL's tables are all in the focus;
- gold columns kept: share of the gold SQL's column references whose table is kept;
- tables kept (mean), and the schema prompt's estimated tokens focused and whole (the reference
  schema the generators see, ``pipeline.single_pass`` settings: DDL, column notes, example rows),
  the focus (``pipeline.focus``) applied whatever the schema's size;
- prefix shared: the share of a focused prompt that the previous question's focused prompt (in
  the half's order, as a run asks them) starts with — what a llama.cpp slot serves from its KV
  cache — with the tables hubs first and in catalog order (``pipeline.focus.order``);
- with ``--misses``, each question that lost a gold table and what was kept.

Cell-value hits come from the L0 cell index when it is built (``scale-analytics index``), as in
the pipelines; ``--no-cells`` measures without them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys

import sqlglot
from sqlglot import exp

from _load import parse_guarded  # benchmarks/_load.py
from core.config import load_config, section
from eval.loaders import load_benchmark
from pipelines.agents.runtime import as_executor
from pipelines.database_rules import settle_for
from pipelines.factory import build_retrievers
from pipelines.indexing.cell_values.ngrams import question_ngrams
from pipelines.sandbox import Sandbox
from pipelines.schema.focus import SchemaFocuser
from pipelines.schema.reference import reference_schema
from pipelines.settings import PipelineSettings
from pipelines.strategies.full_width_settings import FullWidthScaling


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
    args, guard = parse_guarded(parser)
    guard.before()
    cfg = load_config(args.overrides or ["benchmark=demo", "benchmark.stride=1"])
    settings = section(cfg, "pipeline", PipelineSettings)
    bench = load_benchmark(cfg.benchmark)
    cells, _ = (None, None) if args.no_cells else build_retrievers(cfg)
    executor = as_executor(Sandbox())
    # The focus as the pipelines build it, but applied to every schema (the threshold is a
    # pipeline decision; the recall of the linking step is measured on each).
    # One focuser per table order; the configured order's is the one whose recall is measured.
    by_order = {
        order: SchemaFocuser(settings.focus.model_copy(update={"above_tokens": 0, "order": order}))
        for order in ("hubs_first", "catalog")
    }
    focuser = by_order[settings.focus.order]
    previous: dict[tuple[str, str], str] = {}
    references = {}
    rows: dict[str, list[tuple]] = {"even": [], "odd": []}
    for position, task in enumerate(bench.tasks):
        db = task.db
        if db.path not in references:
            chosen, _, _ = await settle_for(executor, db, settings, FullWidthScaling())
            references[db.path] = await reference_schema(
                executor,
                db,
                sample_rows=chosen.single_pass.sample_rows,
                column_notes=settings.single_pass.column_notes,
            )
            for f in by_order.values():
                await f.prepare(db, references[db.path])
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
        focused = focuser.focus(db, references[db.path], task.question, task.evidence, hits)
        gold_tables, gold_columns = gold_references(task.gold_sql, db.dialect)
        kept = {t.lower() for t in focused.tables}
        # benchmark.stride=2 with offset 0 / 1 selects these halves
        half = "even" if (bench_offset(cfg) + position * bench_stride(cfg)) % 2 == 0 else "odd"
        shared = []
        for order, f in by_order.items():
            text = f.focus(db, references[db.path], task.question, task.evidence, hits).text
            before = previous.get((half, order), "")
            shared.append(len(os.path.commonprefix([text, before])) / max(1, len(text)))
            previous[(half, order)] = text
        rows[half].append(
            (
                gold_tables <= kept,
                sum(t in kept for t, _ in gold_columns),
                len(gold_columns),
                len(focused.tables),
                focused.tokens,
                focused.whole_tokens,
                *shared,
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
        "  prefix shared: hubs first / catalog"
    )
    for name, got in (*rows.items(), ("all", rows["even"] + rows["odd"])):
        if not got:
            continue
        n = len(got)
        print(
            f"{name:<10} {n:>9}  {sum(r[0] for r in got) / n:>15.3f}  "
            f"{sum(r[1] for r in got) / max(1, sum(r[2] for r in got)):>12.3f}  "
            f"{statistics.mean(r[3] for r in got):>11.1f}  "
            f"{statistics.mean(r[4] for r in got):>8.0f} / {statistics.mean(r[5] for r in got):<5.0f}"
            f"  {statistics.mean(r[6] for r in got):>13.2f} / {statistics.mean(r[7] for r in got):.2f}"
        )
    print(guard.banner or "load ok")


def bench_stride(cfg) -> int:
    return int(cfg.benchmark.get("stride") or 1)


def bench_offset(cfg) -> int:
    return int(cfg.benchmark.get("offset") or 0)


if __name__ == "__main__":
    asyncio.run(main())
