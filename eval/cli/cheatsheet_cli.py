"""``scale-analytics cheatsheet show|reset|export [--db DB] [--out FILE] [key=value ...]``: the
rules the agentic mode learned, one sheet per database (pipelines/agentic_mode/cheatsheet.py).

    scale-analytics cheatsheet show                               # every sheet under the root
    scale-analytics cheatsheet show --db claims benchmark=demo    # that benchmark's database
    scale-analytics cheatsheet show --db concert_singer.sqlite    # a database file, as ask --db
    scale-analytics cheatsheet export --db claims --out claims-rules.json
    scale-analytics cheatsheet reset --db claims benchmark=demo

The sheets lie under ``pipeline.cheatsheet.root`` (default ``<paths.runs>/cheatsheets``).
``--db`` names a database id — with ``benchmark=NAME`` that benchmark's database of this id (an
id it lacks is an error), without it every sheet of this id — or a database file's path;
without ``--db``, every sheet. ``show`` prints a table per sheet (rank, class, seen, fixed,
rule); ``export`` writes a JSON list of ``{db_id, db_path, file, rules}`` to stdout or
``--out``; ``reset`` removes the sheets, even corrupt ones, asking nothing, and says how many
rules they held. A corrupt sheet, an unknown database: one line on stderr, exit code 2.
The command sits in the evaluation layer because a benchmark's loader says where its
databases are.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core.cli import add_positional, parse_positional
from core.cli_errors import fail, user_errors
from core.config import load_config, section
from eval.errors import EvalError
from eval.loaders import BenchmarkSpec, load_benchmark
from pipelines.agentic_mode import Cheatsheet
from pipelines.agentic_mode.cheatsheet import path_digest
from pipelines.settings import CheatsheetSettings

PROG = "scale-analytics cheatsheet"
ACTIONS = ("show", "reset", "export")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="The agentic mode's learned rules.")
    add_positional(
        parser,
        "{show,reset,export}",
        "what to do, and Hydra overrides (benchmark=demo, pipeline.cheatsheet.root=DIR)",
    )
    parser.add_argument(
        "--db", help="a database id (of benchmark=NAME, when given) or a database file's path"
    )
    parser.add_argument("--out", type=Path, help="export: write the JSON here, not to stdout")
    return parser


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """``(args, hydra overrides)`` with ``args.action`` set; the first argument that is not
    ``key=value`` is the action, any other goes to Hydra, which refuses it."""
    parser = _parser()
    say = f"say what to do: one of {', '.join(ACTIONS)}"
    args, action, overrides = parse_positional(parser, argv, say)
    if action not in ACTIONS:
        parser.error(say)
    args.action = action
    if args.out is not None and args.action != "export":
        parser.error("--out is for export")
    return args, overrides


def main(argv: list[str]) -> int:
    args, overrides = parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 200)  # pipes: no 80-column wrap
    try:
        cfg = load_config(overrides)
        settings = section(cfg, "pipeline.cheatsheet", CheatsheetSettings)
        if settings.root is None:
            raise EvalError("pipeline.cheatsheet.root is null: there is no cheatsheet")
        named = any(o.lstrip("+~").startswith("benchmark") for o in overrides)
        sheets = select(settings, args.db, section(cfg, "benchmark", BenchmarkSpec), named)
        if args.action == "reset":
            removed = sum(sheet.reset() for sheet in sheets)
            console.print(
                f"removed {removed} rules of {len(sheets)} cheatsheets under {settings.root}",
                highlight=False,
            )
            return 0
        sheets = [sheet for sheet in sheets if sheet.path.exists()]
        if args.action == "export":
            export(sheets, args.out)
            return 0
        show(console, sheets, settings.root)
    except (EvalError, *user_errors()) as exc:
        return fail(PROG, exc)
    return 0


def select(
    settings: CheatsheetSettings, db: str | None, benchmark: BenchmarkSpec, named: bool
) -> list[Cheatsheet]:
    """The sheets ``--db`` names (every stored one without it), found or not yet written."""
    if db is None:
        return list(Cheatsheet.stored(settings))
    if Path(db).expanduser().is_file():
        digest = path_digest(db)
        return [s for s in Cheatsheet.stored(settings) if s.path.stem.endswith(f"-{digest}")]
    if not named:
        return [s for s in Cheatsheet.stored(settings) if s.path.stem.rsplit("-", 1)[0] == db]
    # Every database of the benchmark, whatever subset (limit, stride, offset) is configured.
    whole = load_benchmark(benchmark.model_copy(update={"limit": None, "stride": 1, "offset": 0}))
    refs = {task.db.db_id: task.db for task in whole.tasks}
    if db not in refs:
        known = sorted(refs)
        listed = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
        raise EvalError(f"benchmark {benchmark.name!r} has no database {db!r} (it has {listed})")
    return [Cheatsheet.open(settings, refs[db])]


def show(console: Console, sheets: list[Cheatsheet], root: str) -> None:
    if not sheets:
        console.print(f"no rules learned under {root}", highlight=False)
    for sheet in sheets:
        db_id, db_path = sheet.database()
        table = Table(title=escape(f"{db_id} ({db_path}): {sheet.path}"), title_justify="left")
        for column in ("rank", "class", "seen", "fixed", "rule"):
            table.add_column(
                column, justify="right" if column in ("rank", "seen", "fixed") else "left"
            )
        for rank, rule in enumerate(sheet.rules(), 1):
            table.add_row(
                str(rank), rule.error_class, str(rule.seen), str(rule.fixed), escape(rule.text)
            )
        console.print(table)


def export(sheets: list[Cheatsheet], out: Path | None) -> None:
    exported = []
    for sheet in sheets:
        db_id, db_path = sheet.database()
        exported.append(
            {"db_id": db_id, "db_path": db_path, "file": str(sheet.path), "rules": sheet.export()}
        )
    text = json.dumps(exported, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = out.with_name(f".{out.name}.tmp")
    staged.write_text(text, encoding="utf-8")
    os.replace(staged, out)
    rules = sum(len(entry["rules"]) for entry in exported)
    print(f"wrote {rules} rules of {len(exported)} cheatsheets to {out}")
