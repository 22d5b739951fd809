"""``scale-analytics index [key=value ...]``: build the L0 indexes of a benchmark's databases.

    scale-analytics index benchmark=spider_dev                        # changed databases only
    scale-analytics index benchmark=demo pipeline.index.force=true    # rebuild everything
    scale-analytics index benchmark=spider_dev pipeline.index.executor=local

Exit code 0 when nothing failed, 1 otherwise (the table says which and why). A second table
says, per database, how many of its columns and tables its own documentation describes and
from which sources (pipelines/schema/documentation). The command sits in
the evaluation layer because the benchmark loader says which databases to index; the indexes
themselves know only databases (``pipelines.indexing.build_all``).
"""

from __future__ import annotations

import os
import sys
from collections import Counter

from rich.console import Console
from rich.table import Table

from core.config import load_config, section
from eval.loaders import load_benchmark
from pipelines.indexing.reports import BuildReport
from pipelines.indexing.runner import WORKER_ENV, build_all
from pipelines.indexing.settings import IndexSettings
from pipelines.schema import introspect
from pipelines.schema.documentation import TableDoc, load_documentation


def _table(reports: list[BuildReport]) -> Table:
    table = Table(title="L0 indexes")
    for name in ("index", "status", "values", "size", "seconds", "reason"):
        table.add_column(name, justify="right" if name in ("values", "size", "seconds") else "left")
    for r in reports:
        values = r.counts.get("values", r.counts.get("examples"))
        table.add_row(
            r.name,
            r.status,
            "" if values is None else str(values),
            f"{r.bytes_on_disk / 1e6:.2f} MB",
            f"{r.seconds:.1f}",
            r.reason,
        )
    return table


def _documentation_table(dbs: list) -> Table:
    """Per database: how many columns its own documentation describes, and from which sources."""
    table = Table(title="Schema documentation")
    for name in ("database", "documented columns", "tables described", "sources"):
        table.add_column(
            name, justify="right" if "described" in name or "columns" in name else "left"
        )
    for db in dbs:
        try:
            view = introspect(db, 0, infer_joins=False)
        except Exception as exc:  # noqa: BLE001 - an unreadable database is reported by the build
            table.add_row(db.db_id, "-", "-", f"unreadable: {exc}")
            continue
        docs = load_documentation(db)
        columns = [(t.name, c.name) for t in view.tables for c in t.columns]
        documented = sum(1 for t, c in columns if docs.column(t, c))
        described = sum(1 for t in view.tables if (docs.table(t.name) or TableDoc()).description)
        table.add_row(
            db.db_id,
            f"{documented}/{len(columns)}",
            f"{described}/{len(view.tables)}",
            ", ".join(docs.sources) or "none",
        )
    return table


def main(argv: list[str]) -> int:
    for key, value in WORKER_ENV.items():
        os.environ.setdefault(key, value)
    cfg = load_config(argv)
    settings = section(cfg, "pipeline.index", IndexSettings)
    bench = load_benchmark(cfg.benchmark)
    console = Console(stderr=True)
    missing = sorted({s.db_id for s in bench.skipped})
    if missing:
        console.print(
            f"{len(bench.skipped)} questions skipped, database missing: {', '.join(missing)}"
        )
    dbs = [task.db for task in bench.tasks]
    reports = build_all(dbs, settings, progress=sys.stderr.isatty())
    Console().print(_table(reports))
    Console().print(_documentation_table(list({db.path: db for db in dbs}.values())))
    totals = Counter(r.status for r in reports)
    console.print(", ".join(f"{n} {status}" for status, n in sorted(totals.items())))
    return 1 if totals["failed"] else 0
