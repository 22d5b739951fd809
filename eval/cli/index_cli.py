"""``scale-analytics index [key=value ...]``: build the L0 indexes of a benchmark's databases.

    scale-analytics index benchmark=spider_dev                        # changed databases only
    scale-analytics index benchmark=demo pipeline.index.force=true    # rebuild everything
    scale-analytics index benchmark=spider_dev pipeline.index.executor=local

Exit code 0 when nothing failed, 1 otherwise (the table says which and why). A second table
says, per database, how many of its columns, nested columns' sub-fields and tables its own
documentation describes, how many columns and sub-fields it gives a value vocabulary, how many
of those vocabularies the generators' prompt shows whole, and from which sources
(pipelines/schema/documentation). For a benchmark that rates its questions on
SDS (``benchmark=enterprise_demo``), a third counts the questions per SDS bucket and the SQL
constructs their gold queries use (UNNEST, typed-link traversal, window, CTE, set operation;
``eval/sql_constructs.py``). The command sits in
the evaluation layer because the benchmark loader says which databases to index; the indexes
themselves know only databases (``pipelines.indexing.build_all``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from core.config import load_config, section
from eval.loaders import load_benchmark
from eval.sds import SDS_BUCKETS, sds_bucket
from eval.sql_constructs import CONSTRUCTS, sql_constructs
from pipelines.agents.runtime import as_executor
from pipelines.contracts import Task
from pipelines.indexing.builder.reports import BuildReport
from pipelines.indexing.builder.runner import WORKER_ENV, build_all
from pipelines.indexing.settings import IndexSettings
from pipelines.sandbox import Sandbox
from pipelines.schema import introspect
from pipelines.schema.documentation import TableDoc, load_documentation
from pipelines.schema.documentation.coverage import coverage
from pipelines.schema.reference import reference_schema


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
    """Per database: how many columns, nested columns' sub-fields and tables its own
    documentation describes, how many columns and sub-fields it gives a value vocabulary, how
    many of those the generators' prompt shows whole, and from which sources."""
    table = Table(title="Schema documentation (documented / all)")
    for name in ("database", "columns", "sub-fields", "tables", "vocabularies", "in prompt"):
        table.add_column(name, justify="left" if name == "database" else "right")
    table.add_column("sources", overflow="fold", min_width=12)
    with Sandbox() as sandbox:
        for db in dbs:
            try:
                view = introspect(db, 0, infer_joins=False)
                reference = asyncio.run(reference_schema(as_executor(sandbox), db, sample_rows=0))
            except Exception as exc:  # noqa: BLE001 - an unreadable database is reported by the build
                table.add_row(db.db_id, "-", "-", "-", "-", "-", f"unreadable: {exc}")
                continue
            docs = load_documentation(db)
            found = coverage(view, {b.name.lower(): b.text for b in reference.tables})
            described = sum(
                1 for t in view.tables if (docs.table(t.name) or TableDoc()).description
            )
            table.add_row(
                db.db_id,
                f"{found.columns_documented}/{found.columns}",
                f"{found.subfields_documented}/{found.subfields}",
                f"{described}/{len(view.tables)}",
                str(found.vocabularies),
                f"{found.vocabularies_in_prompt}/{found.vocabularies}",
                ", ".join(docs.sources) or "none",
            )
    return table


def questions_table(tasks: Sequence[Task]) -> Table | None:
    """Questions per SDS bucket and how many of them use each construct; None when no question
    carries an SDS total."""
    rated = [t for t in tasks if t.sds is not None]
    if not rated:
        return None
    table = Table(title="Questions by SDS bucket, and the constructs their gold SQL uses")
    table.add_column("SDS bucket")
    for name in ("questions", *CONSTRUCTS):
        table.add_column(name.replace("_", " "), justify="right")
    used = {t.task_id: set(sql_constructs(t.gold_sql or "SELECT 1")) for t in rated}
    for bucket in (*SDS_BUCKETS, "all"):
        group = [t for t in rated if bucket == "all" or sds_bucket(t.sds or 0) == bucket]
        counts = [sum(name in used[t.task_id] for t in group) for name in CONSTRUCTS]
        table.add_row(
            bucket, str(len(group)), *map(str, counts), end_section=bucket == SDS_BUCKETS[-1]
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
    questions = questions_table(bench.tasks)
    if questions is not None:
        Console().print(questions)
    totals = Counter(r.status for r in reports)
    console.print(", ".join(f"{n} {status}" for status, n in sorted(totals.items())))
    return 1 if totals["failed"] else 0
