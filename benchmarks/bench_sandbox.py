"""The sandbox's overhead against the bare engines, on the Spider dev gold queries.

    python benchmarks/bench_sandbox.py [--limit N] [--repeat 5] [--engines sqlite duckdb]
                                       [--ignore-load] [--max-load 1.5] [key=value ...]

For each engine, the same gold queries run through:

- ``raw``: the driver alone (``sqlite3`` with ``mode=ro`` / ``duckdb`` ``read_only``), one
  connection per database, ``fetchall``;
- ``inline``: ``Sandbox(isolation="inline")`` — guard, engine in the calling thread, byte
  budget, canonical rows and hash;
- ``process``: ``Sandbox()`` (the default) — the same in a worker process, answers over a pipe;
- ``process, cold guard``: the same with the guard's approval cache emptied before each pass,
  so every query is parsed by sqlglot (what a never-seen candidate costs).

Each column is the best of ``--repeat`` passes over every query, after one warm-up pass
(connections open, guard cache filled); ratios are against ``raw``. DuckDB runs on copies of
the Spider SQLite databases made for the run (declared column types kept where they map).
The load average is printed before and after; a loaded machine's figures are refused (exit 3)
unless ``--ignore-load``. Also prints a fresh worker's start-up time.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
from rich.console import Console
from rich.table import Table

from _load import LoadGuard, add_load_arguments  # benchmarks/_load.py
from core.config import load_config
from eval.loaders import load_benchmark
from pipelines.contracts import DatabaseRef
from pipelines.sandbox import Sandbox
from pipelines.sandbox import sandbox as sandbox_module
from pipelines.sandbox.worker_process import WorkerProcess

Query = tuple[str, DatabaseRef]


def _loadavg() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


# --- the raw drivers ----------------------------------------------------------------------------


def _raw_runner(dialect: str) -> tuple[Callable[[str, DatabaseRef], None], Callable[[], None]]:
    connections: dict[str, object] = {}

    def connect(path: str) -> object:
        if dialect == "sqlite":
            return sqlite3.connect(
                Path(path).resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None
            )
        return duckdb.connect(path, read_only=True)

    def run(sql: str, db: DatabaseRef) -> None:
        connection = connections.get(db.path)
        if connection is None:
            connection = connections[db.path] = connect(db.path)
        try:
            connection.execute(sql).fetchall()  # type: ignore[attr-defined]
        except (sqlite3.Error, duckdb.Error):
            pass  # an error costs what it costs, in every column alike

    def close() -> None:
        for connection in connections.values():
            connection.close()  # type: ignore[attr-defined]

    return run, close


def _sandbox_runner(
    **bounds: object,
) -> tuple[Callable[[str, DatabaseRef], None], Callable[[], None]]:
    sandbox = Sandbox(timeout_s=30, row_cap=10_000, **bounds)
    return (lambda sql, db: sandbox.execute(sql, db)), sandbox.close


# --- DuckDB copies of the Spider databases -----------------------------------------------------

_DUCK_TYPES = (
    ("INT", pa.int64()),
    ("REAL", pa.float64()),
    ("FLOA", pa.float64()),
    ("DOUB", pa.float64()),
    ("NUMERIC", pa.float64()),
    ("DECIMAL", pa.float64()),
)


def _arrow_type(declared: str) -> pa.DataType:
    upper = declared.upper()
    for marker, arrow_type in _DUCK_TYPES:
        if marker in upper:
            return arrow_type
    return pa.string()


def _convert(value: object, arrow_type: pa.DataType) -> object:
    if value is None:
        return None
    try:
        if arrow_type == pa.int64():
            return int(value)  # type: ignore[arg-type]
        if arrow_type == pa.float64():
            return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _duckdb_copy(db: DatabaseRef, folder: Path) -> DatabaseRef:
    target = folder / f"{db.db_id}.duckdb"
    if not target.exists():
        source = sqlite3.connect(Path(db.path).resolve().as_uri() + "?mode=ro", uri=True)
        source.text_factory = lambda raw: raw.decode("utf-8", "replace")
        out = duckdb.connect(str(target))
        tables = [
            name
            for (name,) in source.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for table in tables:
            info = source.execute(f'PRAGMA table_info("{table}")').fetchall()
            names = [row[1] for row in info]
            types = [_arrow_type(row[2] or "") for row in info]
            rows = source.execute(f'SELECT * FROM "{table}"').fetchall()
            columns = {
                f"c{i}": pa.array([_convert(r[i], t) for r in rows], type=t)
                for i, t in enumerate(types)
            }
            staged = pa.table(columns) if columns else None
            if staged is None:
                continue
            out.register("staged", staged)
            select = ", ".join(f'c{i} AS "{name}"' for i, name in enumerate(names))
            out.execute(f'CREATE TABLE "{table}" AS SELECT {select} FROM staged')
            out.unregister("staged")
        out.close()
        source.close()
    return DatabaseRef(db_id=db.db_id, path=str(target), dialect="duckdb")


# --- timing ------------------------------------------------------------------------------------


def _best_pass(
    run: Callable[[str, DatabaseRef], None],
    queries: Sequence[Query],
    repeat: int,
    before_each: Callable[[], None] = lambda: None,
) -> float:
    for sql, db in queries:  # warm-up: connections, workers, guard cache
        run(sql, db)
    passes = []
    for _ in range(repeat):
        before_each()
        started = time.perf_counter()
        for sql, db in queries:
            run(sql, db)
        passes.append(time.perf_counter() - started)
    return min(passes)


def _measure(queries: Sequence[Query], repeat: int) -> dict[str, float]:
    dialect = queries[0][1].dialect
    figures: dict[str, float] = {}
    run, close = _raw_runner(dialect)
    figures["raw"] = _best_pass(run, queries, repeat)
    close()
    run, close = _sandbox_runner(isolation="inline")
    figures["inline"] = _best_pass(run, queries, repeat)
    close()
    run, close = _sandbox_runner()
    figures["process"] = _best_pass(run, queries, repeat)
    figures["process, cold guard"] = _best_pass(
        run, queries, repeat, before_each=sandbox_module.APPROVALS.clear
    )
    close()
    return figures


def _worker_start_s(samples: int = 3) -> float:
    from pipelines.sandbox.limits import SandboxLimits

    times = []
    for _ in range(samples):
        started = time.perf_counter()
        worker = WorkerProcess(SandboxLimits())
        times.append(time.perf_counter() - started)
        worker.stop()
    return statistics.median(times)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--engines", nargs="+", default=["sqlite", "duckdb"])
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. benchmark.stride=3")
    add_load_arguments(parser)
    args = parser.parse_args(argv)

    cfg = load_config(["benchmark=spider_dev", *args.overrides])
    bench = load_benchmark(cfg.benchmark)
    tasks = bench.tasks[: args.limit] if args.limit else bench.tasks
    sqlite_queries: list[Query] = [(t.gold_sql, t.db) for t in tasks]
    console = Console(width=130)
    console.print(
        f"{bench.name}: {len(sqlite_queries)} gold queries on "
        f"{len({db.db_id for _, db in sqlite_queries})} databases · {os.cpu_count()} CPUs · "
        f"repeat {args.repeat}"
    )

    with tempfile.TemporaryDirectory(prefix="bench_sandbox_") as scratch:
        workloads: dict[str, list[Query]] = {}
        if "sqlite" in args.engines:
            workloads["sqlite"] = sqlite_queries
        if "duckdb" in args.engines:
            copies: dict[str, DatabaseRef] = {}
            for _, db in sqlite_queries:
                if db.db_id not in copies:
                    copies[db.db_id] = _duckdb_copy(db, Path(scratch))
            workloads["duckdb"] = [(sql, copies[db.db_id]) for sql, db in sqlite_queries]

        guard = LoadGuard.from_args(args)
        before = _loadavg()
        guard.before()  # prints the load average too, and refuses a loaded machine
        results = {engine: _measure(queries, args.repeat) for engine, queries in workloads.items()}
        start_s = _worker_start_s()
        after = _loadavg()
        guard.after()

    table = Table(
        title=f"Sandbox overhead: ms per query, best of {args.repeat} passes (ratio to raw)"
    )
    columns = ["raw", "inline", "process", "process, cold guard"]
    table.add_column("engine")
    table.add_column("queries", justify="right")
    for column in columns:
        table.add_column(column, justify="right")
    table.add_column("process − raw", justify="right")
    for engine, figures in results.items():
        n = len(workloads[engine])
        raw = figures["raw"]
        cells = [
            f"{figures[c] / n * 1000:.3f}" + ("" if c == "raw" else f" ({figures[c] / raw:.2f}×)")
            for c in columns
        ]
        extra = (figures["process"] - raw) / n * 1000
        table.add_row(engine, str(n), *cells, f"{extra:+.3f}")
    console.print(table)
    console.print(f"load average (1/5/15 min): before {before} · after {after}")
    console.print(f"a fresh worker process starts in {start_s:.3f} s (median of 3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
