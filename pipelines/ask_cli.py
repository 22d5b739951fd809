"""``scale-analytics ask "QUESTION" --db PATH [evidence=...] [key=value ...]``

Answers one question against one database with the configured pipeline and prints the chosen
SQL, a preview of its result and a trace summary (candidates, buckets, LLM calls, tokens,
seconds). Any other ``key=value`` is a Hydra override, e.g. ``scaling=cpu_small``,
``model=qwen2.5-coder-0.5b``, ``scaling.single_pass=true``.

    $ scale-analytics ask "How many singers are from France?" --db concert_singer.sqlite scaling=cpu_small
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from pipelines.contracts import DatabaseRef, Prediction, Task
from pipelines.trace import ReasoningTrace

DIALECTS = {".sqlite": "sqlite", ".sqlite3": "sqlite", ".db": "sqlite", ".duckdb": "duckdb"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scale-analytics ask", description="Answer one question against a database.")
    p.add_argument("question", help="the question, in natural language")
    p.add_argument("--db", required=True, help="path of a SQLite (.sqlite/.db) or DuckDB (.duckdb) file")
    p.add_argument("--db-id", help="database id (default: the file name without suffix)")
    p.add_argument("--descriptions", help="folder of BIRD-style per-table description CSVs")
    p.add_argument("overrides", nargs="*", help="evidence=TEXT and Hydra key=value overrides")
    return p


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, str, list[str]]:
    """``(args, evidence, hydra overrides)``; ``evidence=…`` is not a Hydra key."""
    args = _parser().parse_intermixed_args(argv)
    evidence, overrides = "", []
    for item in args.overrides:
        if "=" not in item:
            _parser().error(f"unexpected argument {item!r}: overrides are key=value")
        if item.startswith("evidence="):
            evidence = item.split("=", 1)[1]
        else:
            overrides.append(item)
    return args, evidence, overrides


def database_ref(path: str, db_id: str | None, descriptions: str | None) -> DatabaseRef:
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise FileNotFoundError(f"no database file at {file}")
    dialect = DIALECTS.get(file.suffix.lower())
    if dialect is None:
        raise ValueError(f"cannot tell the engine of {file.name}: use one of {', '.join(DIALECTS)}")
    return DatabaseRef(db_id=db_id or file.stem, path=str(file), dialect=dialect,  # type: ignore[arg-type]
                       description_dir=descriptions)


async def _answer(cfg, task: Task) -> tuple[Prediction, ReasoningTrace]:
    import models
    from pipelines.factory import build_pipeline, build_retrievers
    from pipelines.sandbox import Sandbox

    client = models.build_client(cfg.model)
    sandbox = Sandbox(timeout_s=cfg.pipeline.sandbox.timeout_s, row_cap=cfg.pipeline.sandbox.row_cap)
    cells, examples = build_retrievers(cfg)
    pipeline = build_pipeline(cfg, client=client, sandbox=sandbox, cell_retriever=cells, example_retriever=examples)
    try:
        return await pipeline.answer_with_trace(task)
    finally:
        await pipeline.aclose()
        sandbox.close()
        client.close()


def render(console: Console, prediction: Prediction, trace: ReasoningTrace, preview_rows: int) -> None:
    if prediction.error:
        console.print(f"[red]no answer:[/] {prediction.error}")
    else:
        console.print("[bold]SQL[/]")
        console.print(prediction.sql, highlight=False)
        result = prediction.exec_result
        if result is not None and not result.ok:
            console.print(f"[red]execution error:[/] {result.error}")
        elif result is not None:
            table = Table(*result.columns, title=f"{result.row_count} row(s)", title_justify="left")
            for row in result.rows[:preview_rows]:
                table.add_row(*("NULL" if v is None else str(v) for v in row))
            console.print(table)
    s = trace.summary()
    console.print(
        f"candidates {s['candidates']} · buckets {s['buckets']} · LLM calls {s['llm_calls']} · "
        f"tokens {s['tokens']} ({s['cached_prompt_tokens']} prompt tokens from cache) · {s['seconds']} s" + (f" · producer {prediction.producer}" if prediction.producer else "")
    )
    if prediction.degraded:
        console.print(f"[yellow]degraded:[/] {', '.join(prediction.degradation_reasons)}")
    if prediction.trace_path:
        console.print(f"trace: {prediction.trace_path}")


def main(argv: list[str]) -> int:
    from pipelines.config import load_config

    args, evidence, overrides = parse_args(argv)
    console = Console()
    try:
        db = database_ref(args.db, args.db_id, args.descriptions)
    except (FileNotFoundError, ValueError) as exc:
        print(f"scale-analytics ask: {exc}", file=sys.stderr)
        return 2
    cfg = load_config(overrides)
    task = Task(task_id="ask", question=args.question, db=db, evidence=evidence)
    prediction, trace = asyncio.run(_answer(cfg, task))
    render(console, prediction, trace, cfg.pipeline.sandbox.preview_rows)
    return 1 if prediction.error else 0
