"""AST guard: admit exactly one read query, refuse everything else with ``ReadOnlyViolation``.

    sql ──sqlglot.parse──► one statement? ──► root is SELECT / set operation / VALUES?
        ──► no write, DDL, session or file node anywhere? ──► no blocked function or file scan?
        ──► the parsed expression

A string sqlglot cannot parse is screened token by token (statement head, second statement,
write keywords, blocked function calls) so that a violation is named as such; otherwise it
comes back as ``sqlglot.errors.ParseError``. The sandbox fails closed on that: it never runs
a string the guard could not parse (it asks the engine's parser, without running anything,
only to tell a syntax error from a refusal). The engines are read-only on their own and
DuckDB re-checks the statement with its own parser (see ``sqlite.py`` / ``duckdb.py``), so
the guard is the first wall, not the only one.

``ApprovalCache`` remembers admitted strings, bounded in bytes, for the sandbox.

Example::

    >>> check_read_only("SELECT name FROM singer WHERE age > 30", "sqlite").sql()
    'SELECT name FROM singer WHERE age > 30'
    >>> check_read_only("DELETE FROM singer", "sqlite")
    Traceback (most recent call last):
    ...
    pipelines.sandbox.errors.ReadOnlyViolation: read-only violation: DELETE is not allowed (only one read query is allowed)
"""  # noqa: E501 (a doctest's expected exception line)

from __future__ import annotations

import re
import threading
from collections import OrderedDict

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import Token, TokenType

from pipelines.sandbox.engine import statement_keyword
from pipelines.sandbox.errors import ReadOnlyViolation
from pipelines.sandbox.rules import (  # noqa: F401  (re-exported)
    DIALECT_RULES,
    DialectRules,
    is_blocked_function,
    is_blocked_name,
    rules_for,
)

# Statement roots that are one read query.
_READ_ROOTS = (exp.Select, exp.SetOperation, exp.Values)

# Nodes refused anywhere in the tree, with the name the violation reports. ``exp.Command`` is
# sqlglot's fallback for statements it does not model (VACUUM, CALL, LOAD, EXPLAIN, ...): it is
# reported by its own keyword.
_FORBIDDEN_NODES: tuple[tuple[type[exp.Expression], str], ...] = (
    (exp.Insert, "INSERT"),
    (exp.Update, "UPDATE"),
    (exp.Delete, "DELETE"),
    (exp.Merge, "MERGE"),
    (exp.Create, "CREATE"),
    (exp.Drop, "DROP"),
    (exp.Alter, "ALTER"),
    (exp.TruncateTable, "TRUNCATE"),
    (exp.Into, "SELECT ... INTO"),
    (exp.Attach, "ATTACH"),
    (exp.Detach, "DETACH"),
    (exp.Pragma, "PRAGMA"),
    (exp.Copy, "COPY"),
    (exp.Export, "EXPORT"),
    (exp.Install, "INSTALL"),
    (exp.LoadData, "LOAD DATA"),
    (exp.Set, "SET"),
    (exp.Use, "USE"),
    (exp.Transaction, "BEGIN"),
    (exp.Commit, "COMMIT"),
    (exp.Rollback, "ROLLBACK"),
    (exp.Analyze, "ANALYZE"),
    (exp.Describe, "DESCRIBE"),
    (exp.Show, "SHOW"),
    (exp.Summarize, "SUMMARIZE"),
    (exp.Grant, "GRANT"),
    (exp.Revoke, "REVOKE"),
    (exp.Comment, "COMMENT"),
    (exp.Declare, "DECLARE"),
    (exp.Execute, "EXECUTE"),
    (exp.Cache, "CACHE"),
    (exp.Uncache, "UNCACHE"),
    (exp.Refresh, "REFRESH"),
    (exp.Kill, "KILL"),
    (exp.Lock, "SELECT ... FOR UPDATE / SHARE"),
    (exp.Command, ""),
)


_FILE_LIKE = re.compile(
    r"[/\\]|://|\.(csv|tsv|txt|json|jsonl|ndjson|parquet|arrow|xlsx|db|duckdb|sqlite|gz|zst)$",
    re.IGNORECASE,
)

# The screen for strings sqlglot cannot parse. A first word that starts some other statement is
# a violation; an unknown first word ("SELEC") is just a syntax error for the engine to report.
# fmt: off
_STATEMENT_HEADS = frozenset(
    {
        "ABORT", "ALTER", "ANALYZE", "ATTACH", "BEGIN", "CALL", "CHECKPOINT", "COMMENT", "COMMIT",
        "COPY", "CREATE", "DEALLOCATE", "DELETE", "DESCRIBE", "DETACH", "DROP", "END", "EXECUTE",
        "EXPLAIN", "EXPORT", "FORCE", "GRANT", "IMPORT", "INSERT", "INSTALL", "LOAD", "MERGE",
        "PRAGMA", "PREPARE", "REINDEX", "RELEASE", "REPLACE", "RESET", "REVOKE", "ROLLBACK",
        "SAVEPOINT", "SET", "SHOW", "SUMMARIZE", "TRUNCATE", "UPDATE", "UPSERT", "USE", "VACUUM",
    }
)
_WRITE_TOKENS = {
    TokenType.INSERT, TokenType.UPDATE, TokenType.DELETE, TokenType.MERGE, TokenType.CREATE,
    TokenType.DROP, TokenType.ALTER, TokenType.ATTACH, TokenType.DETACH, TokenType.PRAGMA,
    TokenType.COPY, TokenType.INTO, TokenType.TRUNCATE, TokenType.COMMAND, TokenType.INSTALL,
}
# fmt: on


# Words, and each symbol on its own: at least as many as sqlglot's tokens (a string literal
# counts each word in it), in one pass of a compiled pattern.
_SHAPE_TOKENS = re.compile(r"\w+|[^\w\s]")
# What sqlglot's parse costs per token, rounded up: measured 8 µs (SQLite's dialect) to 16 µs
# (PostgreSQL's) on a 2-core machine under load, for IN lists and OR chains of 40,000 tokens.
PARSE_SECONDS_PER_TOKEN = 25e-6


def sql_shape(sql: str) -> tuple[int, int]:
    """``(tokens, depth)``: words and symbols, and the deepest nesting of parentheses, counted
    without parsing (quotes are not looked into, so both may be over-counted, never under)."""
    tokens = depth = deepest = 0
    for match in _SHAPE_TOKENS.finditer(sql):
        tokens += 1
        symbol = match.group()
        if symbol == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif symbol == ")":
            depth -= 1
    return tokens, deepest


def parse_seconds(tokens: int) -> float:
    """The most the guard is expected to take on a statement of ``tokens`` tokens."""
    return tokens * PARSE_SECONDS_PER_TOKEN


def check_read_only(sql: str, dialect: str) -> exp.Expression:
    """Return the parsed statement if ``sql`` is exactly one read query; else raise.

    Raises ``ReadOnlyViolation`` for anything that is not one read query, and
    ``sqlglot.errors.ParseError`` when sqlglot cannot parse a string that shows no sign of
    being more than a read query (or contains no statement at all). A string that raised
    ``ParseError`` was not checked: never run it.
    """
    rules = rules_for(dialect)
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (SqlglotError, RecursionError) as error:
        _screen_tokens(sql, dialect, rules)
        raise ParseError(f"sqlglot could not parse the statement: {error}") from error
    if not statements:
        raise ParseError("no SQL statement")
    if len(statements) > 1:
        raise ReadOnlyViolation("multiple statements", f"{len(statements)} statements")
    statement = statements[0]
    root = statement.unnest()
    if not isinstance(root, _READ_ROOTS):
        raise ReadOnlyViolation(_statement_name(root, sql), "only one read query is allowed")
    for node in statement.walk():
        _check_node(node, rules)
    return statement


def _check_node(node: exp.Expression, rules: DialectRules) -> None:
    for node_type, name in _FORBIDDEN_NODES:
        if isinstance(node, node_type):
            raise ReadOnlyViolation(name or _command_name(node))
    if isinstance(node, exp.Func):
        for name in _function_names(node):
            if is_blocked_name(name, rules):
                raise ReadOnlyViolation(f"function {name}()", "it reaches outside the database")
    if rules.quoted_paths_are_files and isinstance(node, exp.Table):
        target = node.this
        if isinstance(target, exp.Identifier) and target.quoted and _FILE_LIKE.search(target.name):
            raise ReadOnlyViolation(f"file scan {target.name!r}", "FROM names a file")


def _function_names(node: exp.Func) -> set[str]:
    if isinstance(node, exp.Anonymous):
        return {node.name.lower()}
    return {name.lower() for name in node.sql_names()}


def _command_name(node: exp.Expression) -> str:
    return str(node.this).split()[0].upper() if node.this else "COMMAND"


def _statement_name(root: exp.Expression, sql: str) -> str:
    for node_type, name in _FORBIDDEN_NODES:
        if isinstance(root, node_type):
            return name or _command_name(root)
    return statement_keyword(sql)


def _screen_tokens(sql: str, dialect: str, rules: DialectRules) -> None:
    """Refuse an unparsable string whose tokens show a non-read head or a write."""
    try:
        tokens: list[Token] = Dialect.get_or_raise(dialect).tokenize(sql)
    except (SqlglotError, RecursionError):
        return  # not even tokens: the caller refuses it (fail closed)
    if not tokens:
        return
    if tokens[0].text.upper() in _STATEMENT_HEADS:
        raise ReadOnlyViolation(tokens[0].text.upper(), "only one read query is allowed")
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.token_type == TokenType.SEMICOLON and following is not None:
            raise ReadOnlyViolation("multiple statements")
        if token.token_type in _WRITE_TOKENS:
            raise ReadOnlyViolation(token.text.upper())
        if (
            following is not None
            and following.token_type == TokenType.L_PAREN
            and is_blocked_name(token.text.lower(), rules)
        ):
            raise ReadOnlyViolation(
                f"function {token.text.lower()}()", "it reaches outside the database"
            )


class ApprovalCache:
    """Strings the guard admitted, per dialect, least recently used first out.

    Bounded in bytes (the SQL text is what takes room): ``max_bytes`` in all, and a string
    longer than ``max_entry_bytes`` is never kept. Only admissions are kept, so a refused
    string is examined again every time. Thread-safe.
    """

    def __init__(self, max_bytes: int = 8 << 20, max_entry_bytes: int = 64 << 10) -> None:
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes
        self._entries: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __contains__(self, key: tuple[str, str]) -> bool:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return True
            return False

    def add(self, sql: str, dialect: str) -> None:
        size = len(sql) + len(dialect) + 64  # text plus the entry's own bookkeeping
        if size > self.max_entry_bytes:
            return
        with self._lock:
            if (sql, dialect) in self._entries:
                return
            self._entries[(sql, dialect)] = size
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted

    @property
    def size_bytes(self) -> int:
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
