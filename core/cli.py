"""The ``scale-analytics`` command: a thin dispatcher to each subcommand's module.

Subcommands take Hydra overrides as positional ``key=value`` arguments, e.g.
``scale-analytics eval benchmark=spider_dev benchmark.limit=50``, in any order among their other
arguments; a ``key=value`` is always an override, and what the config holds (the benchmark, its
split and folder, the experiment, the model) is set only that way. A subcommand with a
positional of its own (``ask``'s question, ``score``'s predictions file) takes the first argument
that is not an override (``split_overrides``; ``add_positional`` and ``parse_positional`` for an
argparse subcommand) and hands the rest to Hydra, which rejects what it cannot read with the same
message for every subcommand. Flags are for what no config holds: a
database file (``ask --db``), a file's format or a report's path (``score --format``, ``--out``),
an output mode (``ask --json``).

The table names each handler by module path and imports it only when its subcommand runs, so
``scale-analytics models pull`` does not pay for Ray or torch, and this module imports no layer
of the project.

Bad input (an override Hydra rejects, a missing file, an unreadable one) ends any subcommand
with one line on stderr and exit code 2 (``core.cli_errors``). Ctrl-C (or SIGTERM) stops any of them
within seconds with one line and exit code 130 (143), leaving no process behind (``core.stop``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

# Before any subcommand imports lancedb: 0.40 logs a deprecation warning from the Rust core for
# every hybrid search (its sub-queries' score columns), dozens of lines per question.
os.environ.setdefault("LANCEDB_LOG", "error")

# subcommand -> ("module:function", one-line help). Handlers take argv (list[str]) -> int.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("eval.cli.demo_cli:main", "build the demo benchmark and run the main job on it"),
    "models": ("models.cli:main", "pull / list / verify local models, build the native runtime"),
    "index": ("eval.cli.index_cli:main", "build L0 schema, cell and example indexes"),
    "ask": ("pipelines.ask_cli:main", "answer one question against a database"),
    "eval": ("eval.cli.run_cli:main", "run a configured pipeline over a benchmark"),
    "score": ("eval.cli.score_cli:main", "score a predictions file against a benchmark"),
    "report": ("eval.cli.report_cli:main", "ablation table and plots for an experiment"),
    "cheatsheet": (
        "eval.cli.cheatsheet_cli:main",
        "show / reset / export the agentic mode's rules",
    ),
    "serve": ("serve.cli:main", "the online endpoint (Ray Serve): HTTP API and web page"),
    "db": ("eval.cli.db_cli:main", "copy an embedded benchmark's database into PostgreSQL"),
}


# key=value with an optional + / ++ (add) or ~ (delete, value optional); a key is a dotted path, a
# config group path (a/b) or group@package. A question has a space before any "=", so never matches.
_OVERRIDE = re.compile(r"(?:\+\+|\+|~)?[A-Za-z_$][\w$.@/:-]*=.*|~[A-Za-z_$][\w$.@/:-]*", re.DOTALL)


def is_override(arg: str) -> bool:
    """Whether a command-line argument is a Hydra override (rather than a path or a question)."""
    return _OVERRIDE.fullmatch(arg) is not None


def split_overrides(args: list[str]) -> tuple[list[str], list[str]]:
    """``(other arguments, Hydra overrides)``, each in its original order."""
    overrides = [a for a in args if is_override(a)]
    return [a for a in args if not is_override(a)], overrides


def add_positional(parser: argparse.ArgumentParser, name: str, help: str) -> None:
    """The subcommand's positional arguments: its own, ``name``, among Hydra overrides."""
    parser.add_argument("arguments", nargs="*", metavar=f"{name} | key=value", help=help)


def parse_positional(
    parser: argparse.ArgumentParser, argv: list[str], missing: str
) -> tuple[argparse.Namespace, str, list[str]]:
    """``(args, the first argument that is not an override, Hydra overrides)``; any later one that
    is not an override goes to Hydra too, which refuses it. ``missing``: the parser's error when
    every argument is an override."""
    args = parser.parse_intermixed_args(argv)
    words, overrides = split_overrides(args.arguments)
    if not words:
        parser.error(missing)
    first, *stray = words
    return args, first, overrides + stray


def _usage() -> str:
    lines = ["usage: scale-analytics SUBCOMMAND [args] [key=value ...]", "", "subcommands:"]
    width = max(map(len, SUBCOMMANDS))
    lines += [f"  {name:<{width}} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    # Run as the program (argv from the command line), it takes the stop signals; a caller
    # in-process (a test) keeps its own handlers.
    as_program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(_usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"scale-analytics: unknown subcommand {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    target, _ = SUBCOMMANDS[name]
    module_name, func_name = target.split(":")
    module = importlib.import_module(module_name)
    from core import stop
    from core.cli_errors import fail, user_errors

    if as_program:
        stop.install(f"scale-analytics {name}")
    try:
        return int(getattr(module, func_name)(rest) or 0)
    except KeyboardInterrupt:
        stop.say(f"scale-analytics {name}: interrupted")
        return stop.exit_code()
    except user_errors() as exc:
        return fail(f"scale-analytics {name}", exc)


if __name__ == "__main__":
    raise SystemExit(main())
