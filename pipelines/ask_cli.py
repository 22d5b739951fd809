"""``scale-analytics ask "QUESTION" --db PATH [--evidence TEXT] [key=value ...]``

Answers one question against one database with the configured pipeline and prints the chosen
SQL, a preview of its result and a trace summary (candidates, buckets, LLM calls, tokens,
seconds, retrieval). Any other ``key=value`` is a Hydra override, e.g. ``scaling=cpu_small``,
``model=qwen2.5-coder-0.5b``, ``scaling=single_pass``, before or after the question; the
question is the first argument that is not ``key=value`` (``core.cli.parse_positional``).

    $ scale-analytics ask "How many singers are from France?" --db concert_singer.sqlite scaling=cpu_small
    $ scale-analytics ask "How many singers?" --db concert_singer.sqlite --json | jq .sql
    $ scale-analytics ask "How many claims were denied?" --db postgresql://reader@db:5432/claims

Before answering, the database's L0 indexes (cell values; the example index) are built when
missing or stale (``pipelines.indexing.builder.ensure``; off with ``pipeline.index.auto_build=false``).
``--json`` prints exactly one :class:`AskOutput` object on stdout; progress and logs go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from contextlib import nullcontext, redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core.cli import add_positional, parse_positional
from core.cli_errors import fail, user_errors
from core.types import Frozen, Usage
from pipelines.contracts import (
    CandidateSQL,
    ChosenSetting,
    DatabaseRef,
    ExecutionResult,
    Prediction,
    RetrievalSource,
    StepCost,
    Task,
)
from pipelines.sandbox.postgres import database_name, is_server_location
from pipelines.schema.documentation.bird import descriptions_beside
from pipelines.trace import ReasoningTrace

if TYPE_CHECKING:
    from pipelines.indexing.builder.ensure import RetrievalStatus
    from pipelines.sandbox import SandboxLimits

PROG = "scale-analytics ask"
DIALECTS = {".sqlite": "sqlite", ".sqlite3": "sqlite", ".db": "sqlite", ".duckdb": "duckdb"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Answer one question against a database.")
    p.add_argument(
        "--db",
        required=True,
        help="path of a SQLite (.sqlite/.db) or DuckDB (.duckdb) file, or a PostgreSQL "
        "database as postgresql://user@host:port/dbname",
    )
    p.add_argument("--db-id", help="database id (default: the file name without suffix)")
    p.add_argument(
        "--descriptions",
        help="folder of BIRD-style per-table description CSVs (default: a database_description "
        "folder beside the database file, as BIRD lays them out)",
    )
    p.add_argument(
        "--examples",
        help="YAML or JSON file of the database's own solved questions (default: an "
        "<name>.examples.yml beside the database file; a PostgreSQL database has none unless named)",
    )
    p.add_argument("--evidence", default="", help="hint text given with the question (BIRD-style)")
    p.add_argument(
        "--json",
        action="store_true",
        dest="as_json",
        help="print one JSON object on stdout (progress and logs on stderr)",
    )
    add_positional(p, "QUESTION", "the question (in quotes) and Hydra key=value overrides")
    return p


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """``(args, hydra overrides)`` with ``args.question`` set.

    Any argument past the question goes to Hydra, which refuses it as it would in ``eval``.
    """
    args, question, overrides = parse_positional(_parser(), argv, "the question is missing")
    args.question = question
    return args, overrides


def database_ref(
    path: str, db_id: str | None, descriptions: str | None, examples: str | None = None
) -> DatabaseRef:
    """The database a ``--db`` names: a file by its suffix, a server by its URI's scheme."""
    if examples is not None and not Path(examples).expanduser().is_file():
        raise FileNotFoundError(f"no examples file at {examples}")
    if is_server_location(path):
        return DatabaseRef(
            db_id=db_id or database_name(path),
            path=path,
            dialect="postgres",
            description_dir=descriptions,
            examples=examples,
        )
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise FileNotFoundError(f"no database file at {file}")
    dialect = DIALECTS.get(file.suffix.lower())
    if dialect is None:
        raise ValueError(f"cannot tell the engine of {file.name}: use one of {', '.join(DIALECTS)}")
    return DatabaseRef(
        db_id=db_id or file.stem,
        path=str(file),
        dialect=dialect,  # type: ignore[arg-type]
        description_dir=descriptions if descriptions is not None else descriptions_beside(file),
        examples=examples,
    )


async def _answer(cfg, task: Task, limits: SandboxLimits) -> tuple[Prediction, ReasoningTrace]:
    import models
    from pipelines.factory import build_pipeline, build_retrievers
    from pipelines.sandbox import Sandbox

    client = models.build_client(cfg.model)
    sandbox = Sandbox(limits=limits)
    cells, examples = build_retrievers(cfg)
    pipeline = build_pipeline(
        cfg, client=client, sandbox=sandbox, cell_retriever=cells, example_retriever=examples
    )
    try:
        return await pipeline.answer_with_trace(task)
    finally:
        await pipeline.aclose()
        sandbox.close()
        client.close()


# --- ``--json``: one object for scripts ------------------------------------------------------

JsonScalar = str | int | float | bool | None


class ResultPreview(Frozen):
    """The chosen SQL's result: columns and the first rows (values a script can read)."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[JsonScalar, ...], ...] = ()
    row_count: int = 0
    truncated: bool = False  # more rows than shown (or than the sandbox's row cap kept)
    error: str | None = None


class AskCandidate(Frozen):
    sql: str
    producer: str
    bucket: str | None  # result hash: candidates with the same bucket returned the same rows
    error: str | None = None


class AskUsage(Frozen):
    """The question's ``Usage`` as ``--json`` prints it: all but the model slots' busy time."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cost_usd: float = 0.0

    @classmethod
    def of(cls, usage: Usage) -> AskUsage:
        return cls(**usage.model_dump(include=set(cls.model_fields)))


class AskRetrieval(Frozen):
    used: tuple[RetrievalSource, ...] = ()  # the retrievers that served this question
    available: tuple[RetrievalSource, ...] = ()  # indexes live when the run started
    status: str = ""  # the printed summary line, e.g. "retrieval: off (examples: ...)"
    built: tuple[str, ...] = ()  # indexes built by this run (first use or stale)


class AskOutput(Frozen):
    """What ``scale-analytics ask --json`` prints: the whole answer in one object."""

    question: str
    db_id: str
    sql: str
    error: str | None = None  # set when no candidate could be produced
    result: ResultPreview | None = None
    candidates: tuple[AskCandidate, ...] = ()
    producer: str = ""
    answered_by: str = ""  # the pipeline step whose pool gave the answer (Prediction.answered_by)
    steps: tuple[StepCost, ...] = ()
    usage: AskUsage = AskUsage()
    seconds: float = 0.0
    degraded: bool = False
    degradation_reasons: tuple[str, ...] = ()
    retrieval: AskRetrieval = AskRetrieval()
    chosen: tuple[ChosenSetting, ...] = ()  # settings chosen for the database (database_rules)
    trace_path: str | None = None


def _scalar(value: object) -> JsonScalar:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)  # Decimal, dates, DuckDB structs: their text, as the table shows them


def _preview(result: ExecutionResult | None, rows: int) -> ResultPreview | None:
    if result is None:
        return None
    if not result.ok:
        return ResultPreview(error=result.error)
    return ResultPreview(
        columns=result.columns,
        rows=tuple(tuple(_scalar(v) for v in row) for row in result.rows[:rows]),
        row_count=result.row_count,
        truncated=result.truncated or result.row_count > rows,
    )


def _candidate(c: CandidateSQL) -> AskCandidate:
    r = c.exec_result
    return AskCandidate(
        sql=c.sql,
        producer=c.producer,
        bucket=r.hash if r else None,
        error=r.error if r is not None and not r.ok else None,
    )


def ask_output(
    task: Task,
    prediction: Prediction,
    trace: ReasoningTrace,
    status: RetrievalStatus,
    preview_rows: int,
) -> AskOutput:
    return AskOutput(
        question=task.question,
        db_id=task.db.db_id,
        sql=prediction.sql,
        error=prediction.error,
        result=_preview(prediction.exec_result, preview_rows),
        candidates=tuple(_candidate(c) for c in prediction.candidates),
        producer=prediction.producer,
        answered_by=prediction.answered_by,
        steps=prediction.steps,
        usage=AskUsage.of(prediction.usage),
        seconds=round(prediction.latency_s, 3),
        degraded=prediction.degraded,
        degradation_reasons=prediction.degradation_reasons,
        retrieval=AskRetrieval(
            used=prediction.retrieval,
            available=status.sources,
            status=retrieval_line(prediction, status, trace),
            built=status.built,
        ),
        chosen=prediction.chosen,
        trace_path=prediction.trace_path,
    )


# --- the human summary ----------------------------------------------------------------------


def retrieval_line(
    prediction: Prediction, status: RetrievalStatus, trace: ReasoningTrace | None = None
) -> str:
    """``retrieval: cells, examples``, or ``retrieval: off (why)`` — never silent."""
    if not status.needed:
        return status.summary()
    missing = status.reasons()
    if (
        trace is not None
    ):  # at query time: a retriever whose index was missing or whose search failed
        missing += [
            d.label
            for d in trace.decisions
            if d.label.endswith(("retriever_unavailable", "retriever_failed"))
        ]
    if prediction.retrieval:
        return f"retrieval: {', '.join(prediction.retrieval)}" + (
            f" ({'; '.join(missing)})" if missing else ""
        )
    if not status.sources:
        return status.summary()
    return f"retrieval: off ({'; '.join(missing) or 'no retriever served this question'})"


def render(
    console: Console,
    prediction: Prediction,
    trace: ReasoningTrace,
    preview_rows: int,
    status: RetrievalStatus | None = None,
) -> None:
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
        f"tokens {s['tokens']} ({s['cached_prompt_tokens']} prompt tokens from cache) · {s['seconds']} s"
        + (f" · producer {prediction.producer}" if prediction.producer else "")
    )
    if status is not None:
        line = escape(retrieval_line(prediction, status, trace))
        console.print(
            f"[yellow]{line}[/]" if not prediction.retrieval and status.needed else line,
            highlight=False,
        )
    if prediction.chosen:
        chosen = ", ".join(map(str, prediction.chosen))
        console.print(f"chosen for {escape(trace.db_id)}: {escape(chosen)}", highlight=False)
    if prediction.degraded:
        console.print(f"[yellow]degraded:[/] {', '.join(prediction.degradation_reasons)}")
    if prediction.trace_path:
        console.print(f"trace: {prediction.trace_path}")


def main(argv: list[str]) -> int:
    from core.config import load_config, section
    from models.backends.vllm_deploy import require_reachable
    from models.config import ModelSettings
    from pipelines.indexing.builder.ensure import ensure_indexes
    from pipelines.sandbox import Sandbox, SandboxError, SandboxSettings
    from pipelines.sandbox.sandbox import SERVER_DIALECTS

    args, overrides = parse_args(argv)
    try:
        db = database_ref(args.db, args.db_id, args.descriptions, args.examples)
        cfg = load_config(overrides)
        sandbox = section(cfg, "pipeline.sandbox", SandboxSettings)
        if db.dialect in SERVER_DIALECTS:  # a server down, or a role that can write: one line
            Sandbox(limits=sandbox.limits).check_database(db)
        require_reachable(section(cfg, "model", ModelSettings))  # ask starts no GPU app
    except (ValueError, SandboxError, *user_errors()) as exc:
        return fail(PROG, exc)
    task = Task(task_id="ask", question=args.question, db=db, evidence=args.evidence)
    # --json: stdout carries the one object only; anything else printed meanwhile goes to stderr.
    with redirect_stdout(sys.stderr) if args.as_json else nullcontext():
        status = ensure_indexes(cfg, [db])
        prediction, trace = asyncio.run(_answer(cfg, task, sandbox.limits))
    preview_rows = sandbox.preview_rows
    if args.as_json:
        sys.stdout.write(
            ask_output(task, prediction, trace, status, preview_rows).model_dump_json() + "\n"
        )
        sys.stdout.flush()
    else:
        render(Console(), prediction, trace, preview_rows, status)
    return 1 if prediction.error else 0
