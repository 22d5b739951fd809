"""``scale-analytics db load NAME postgresql://… [key=value ...]``: copy an embedded benchmark's
database into a PostgreSQL server, to answer the benchmark from there.

    scale-analytics db load claims postgresql://owner@localhost:5432/claims

``NAME`` is an embedded database (``claims``: the demo benchmark's, built first when missing,
under ``benchmark.data_dir``); the URI's role must be able to create tables. Prints one line:
the tables and rows copied. Exit code 2 (one line on stderr) when the copy fails.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli import split_overrides
from core.cli_errors import fail, user_errors

PROG = "scale-analytics db"
# embedded database -> the benchmark config that builds it
EMBEDDED = {"claims": "demo"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Copy an embedded database to a server.")
    p.add_argument("action", choices=["load"])
    p.add_argument("name", choices=sorted(EMBEDDED), help="the embedded database")
    p.add_argument("location", help="postgresql://user@host:port/dbname (created when missing)")
    return p


def main(argv: list[str]) -> int:
    from core.config import load_config
    from eval.demo import build_demo
    from eval.server_copy import copy_to_server
    from pipelines.sandbox.postgres import is_server_location

    words, overrides = split_overrides(argv)
    args = _parser().parse_args(words)
    if not is_server_location(args.location):
        return fail(PROG, ValueError(f"not a postgresql:// URI: {args.location}"))
    try:
        cfg = load_config([f"benchmark={EMBEDDED[args.name]}", *overrides])
        source = build_demo(Path(cfg.benchmark.data_dir)).database_ref()
        report = copy_to_server(source, args.location)
    except (ValueError, *user_errors()) as exc:
        return fail(PROG, exc)
    print(f"{args.name}: {len(report.tables)} tables, {report.rows} rows into {report.location}")
    return 0
