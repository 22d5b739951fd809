"""The functions each target engine provides, and the names a query calls functions by.

A PostgreSQL database's functions are its server's: the names the role may call, read from the
catalog where the schema is introspected (``SchemaView.functions``, ``pipelines/schema/postgres.py``)
and passed in as ``known``; a name is known exactly when it is on that list. A file's engine
(SQLite, DuckDB) is asked itself, on an empty in-memory database, so no list is kept by hand and
the answer is the installed engine's (the one the sandbox runs): its function list (SQLite's
``pragma_function_list``, DuckDB's ``duckdb_functions()``), and for a name not on it — a form
the engine's parser builds itself, like DuckDB's ``coalesce`` — a call with no arguments and
one with ``*``, which the engine refuses either as an unknown function or for its arguments.
A view without a list (one built by hand) is answered by the installed engine of its dialect,
DuckDB for ``postgres``.

    >>> has_function("sqlite", "julianday"), has_function("duckdb", "julianday")
    (True, False)
    >>> has_function("duckdb", "COALESCE"), has_function("duckdb", "IFF")
    (True, False)
    >>> has_function("postgres", "TO_CHAR", frozenset({"to_char"}))
    True
    >>> sql = "SELECT IFF(n > 1, 1, 0), if(n > 1, 1, 0), count(*) FROM t"
    >>> [(c.name, c.text) for c in calls(sqlglot.parse_one(sql, read="duckdb"), sql, "duckdb")]
    [('IFF', 'IFF(n > 1, 1, 0)'), ('if', 'if(n > 1, 1, 0)'), ('count', 'count(*)')]
"""

from __future__ import annotations

import functools
import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from pipelines.contracts import Dialect


def engine_functions(dialect: Dialect, known: frozenset[str] = frozenset()) -> frozenset[str]:
    """Lower-cased names of every function (scalar, aggregate, window, table) of the engine:
    ``known`` (a server's list) when given, else the installed engine's."""
    return known or _installed_functions(dialect)


def has_function(dialect: Dialect, name: str, known: frozenset[str] = frozenset()) -> bool:
    """Whether the engine of ``dialect`` has a function called ``name`` (any case): on ``known``
    (a server's list) when given, else the installed engine's answer."""
    if known:
        return name.lower() in known
    return _installed_has(dialect, name.lower())


@functools.cache
def _installed_functions(dialect: Dialect) -> frozenset[str]:
    if dialect == "sqlite":
        with closing(sqlite3.connect(":memory:")) as conn:
            rows = conn.execute("SELECT name FROM pragma_function_list").fetchall()
    else:
        with closing(duckdb.connect(":memory:")) as conn:
            rows = conn.execute("SELECT DISTINCT function_name FROM duckdb_functions()").fetchall()
    return frozenset(str(name).lower() for (name,) in rows)


_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@functools.lru_cache(maxsize=4096)
def _installed_has(dialect: Dialect, name: str) -> bool:
    if name in _installed_functions(dialect):
        return True
    if not _WORD.match(name):
        return False
    # name() and name(*): a function refused for its arguments, or a star form (DuckDB's
    # COLUMNS(*)), is known; only "no such function" means it is not
    return any(not _unknown(dialect, f"SELECT {name}({args})") for args in ("", "*"))


def _unknown(dialect: Dialect, probe: str) -> bool:
    """Whether the engine refuses ``probe`` for naming a function it does not have."""
    if dialect == "sqlite":
        with closing(sqlite3.connect(":memory:")) as conn:
            try:
                conn.execute(probe)
            except sqlite3.Error as exc:
                return str(exc).startswith("no such function")
            return False
    with closing(duckdb.connect(":memory:")) as conn:
        try:
            conn.execute(probe)
        except duckdb.CatalogException:
            return True
        except duckdb.Error:
            return False
        return False


@dataclass(frozen=True)
class Call:
    """A call of a function by name: the node, the name as written, the whole call's text."""

    func: exp.Func
    name: str
    text: str


def calls(tree: exp.Expression, sql: str, dialect: Dialect) -> list[Call]:
    """Every call by name in ``tree`` (parsed from ``sql`` in ``dialect``), outermost first.

    sqlglot keeps the written position of most calls; for those built by a parser of its own
    (``IF``, ``STRING_AGG``, ``SUBSTRING``) the name is the token before the ``(`` that opens
    the first argument. Forms that are syntax rather than calls (``CASE``, ``EXTRACT(year
    FROM x)``, ``CURRENT_DATE``) have no such name and are left out.
    """
    tokens = sqlglot.tokenize(sql, read=dialect)
    at = {token.start: i for i, token in enumerate(tokens)}
    found = []
    for func in tree.find_all(exp.Func):
        name = _name_token(func, tokens, at)
        close = _closing(tokens, name + 1) if name is not None else None
        if name is not None and close is not None:
            text = sql[tokens[name].start : tokens[close].end + 1]
            found.append(Call(func, tokens[name].text, text))
    return found


def _name_token(func: exp.Func, tokens: list[Token], at: dict[int, int]) -> int | None:
    start = func.meta.get("start")
    if start is not None:
        index = at.get(start)
        return index if index is not None and _opens(tokens, index + 1) else None
    starts = [n.meta["start"] for n in func.walk() if n is not func and "start" in n.meta]
    first = at.get(min(starts)) if starts else None
    if first is None or first < 2 or not _opens(tokens, first - 1):
        return None
    return first - 2 if _WORD.match(tokens[first - 2].text) else None


def _opens(tokens: list[Token], index: int) -> bool:
    return index < len(tokens) and tokens[index].token_type == TokenType.L_PAREN


def _closing(tokens: list[Token], opening: int) -> int | None:
    """The index of the ``)`` that closes the ``(`` at ``opening``."""
    depth = 0
    for index in range(opening, len(tokens)):
        if tokens[index].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[index].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return index
    return None
