"""AST guard: admit exactly one read query, refuse everything else with ``ReadOnlyViolation``.

    sql ──sqlglot.parse──► one statement? ──► root is SELECT / set operation / VALUES?
        ──► no write, DDL, session or file node anywhere? ──► no blocked function or file scan?
        ──► the parsed expression

A string sqlglot cannot parse is screened token by token (statement head, second statement,
write keywords, blocked function calls) and, if nothing is suspicious, handed back as a
``sqlglot.errors.ParseError``: the caller lets the engine report it as an ordinary SQL error.
The engine layer is read-only on its own (see ``sqlite.py`` / ``duckdb.py``), so the guard is
the first wall, not the only one.

Example::

    >>> check_read_only("SELECT name FROM singer WHERE age > 30", "sqlite").sql()
    'SELECT name FROM singer WHERE age > 30'
    >>> check_read_only("DELETE FROM singer", "sqlite")
    Traceback (most recent call last):
    ...
    pipelines.sandbox.errors.ReadOnlyViolation: read-only violation: DELETE is not allowed (only one read query is allowed)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import Token, TokenType

from pipelines.sandbox.engine import statement_keyword
from pipelines.sandbox.errors import ReadOnlyViolation

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
    (exp.Command, ""),
)


@dataclass(frozen=True)
class DialectRules:
    """What one engine can reach beyond its database file, by function name (lower case)."""

    blocked_functions: frozenset[str]
    blocked_prefixes: tuple[str, ...] = ()
    blocked_suffixes: tuple[str, ...] = ()
    # DuckDB "replacement scans" read a file named in FROM: ``FROM 'data.csv'``.
    quoted_paths_are_files: bool = False


# Functions that touch files, extensions, the environment, secrets or sequences, or run SQL
# from a string (which would bypass this guard). Refused in every dialect: a name that does not
# exist in an engine costs nothing to refuse.
# fmt: off
_COMMON_BLOCKED = frozenset(
    {
        "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "fsdir", "lsdir",
        "zipfile", "sqlite_dbpage", "sqlite_dbdata", "sqlite_dbptr", "sha3_query", "eval",
        "read_csv", "read_csv_auto", "read_parquet", "read_json", "read_json_auto",
        "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto",
        "read_ndjson_objects", "read_text", "read_blob", "read_xlsx", "parquet_scan",
        "parquet_metadata", "parquet_schema", "parquet_file_metadata", "parquet_kv_metadata",
        "sniff_csv", "query", "query_table", "getenv", "duckdb_secrets", "which_secret",
        "load_aws_credentials", "nextval", "setval", "sqlite_attach", "postgres_attach",
        "mysql_attach", "checkpoint", "force_checkpoint", "st_read", "st_readosm",
        "iceberg_metadata", "iceberg_snapshots", "delta_scan",
    }
)
# fmt: on

DIALECT_RULES: dict[str, DialectRules] = {
    "sqlite": DialectRules(
        blocked_functions=_COMMON_BLOCKED,
        blocked_prefixes=("shell_", "sqlar_", "read_"),
    ),
    "duckdb": DialectRules(
        # glob() lists files in DuckDB; in SQLite it is the harmless GLOB string match.
        blocked_functions=_COMMON_BLOCKED | {"glob"},
        blocked_prefixes=("read_",),
        blocked_suffixes=("_scan", "_query"),
        quoted_paths_are_files=True,
    ),
}

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


def rules_for(dialect: str) -> DialectRules:
    try:
        return DIALECT_RULES[dialect]
    except KeyError:
        raise ValueError(
            f"no sandbox rules for dialect {dialect!r}; known: {sorted(DIALECT_RULES)}"
        ) from None


def check_read_only(sql: str, dialect: str) -> exp.Expression:
    """Return the parsed statement if ``sql`` is exactly one read query; else raise.

    Raises ``ReadOnlyViolation`` for anything that is not one read query, and
    ``sqlglot.errors.ParseError`` when sqlglot cannot parse a string that shows no sign of
    being more than a read query (or contains no statement at all).
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
            if _is_blocked_function(name, rules):
                raise ReadOnlyViolation(f"function {name}()", "it reaches outside the database")
    if rules.quoted_paths_are_files and isinstance(node, exp.Table):
        target = node.this
        if isinstance(target, exp.Identifier) and target.quoted and _FILE_LIKE.search(target.name):
            raise ReadOnlyViolation(f"file scan {target.name!r}", "FROM names a file")


def _function_names(node: exp.Func) -> set[str]:
    if isinstance(node, exp.Anonymous):
        return {node.name.lower()}
    return {name.lower() for name in node.sql_names()}


def is_blocked_function(name: str, dialect: str) -> bool:
    """Whether the guard refuses a call to ``name`` (any case) in ``dialect``."""
    return _is_blocked_function(name.lower(), rules_for(dialect))


def _is_blocked_function(name: str, rules: DialectRules) -> bool:
    return (
        name in rules.blocked_functions
        or name.startswith(rules.blocked_prefixes)
        or name.endswith(rules.blocked_suffixes)
    )


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
        return  # not even tokens: the engine cannot run it either, and it is read-only anyway
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
            and _is_blocked_function(token.text.lower(), rules)
        ):
            raise ReadOnlyViolation(
                f"function {token.text.lower()}()", "it reaches outside the database"
            )
