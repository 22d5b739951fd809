"""Which functions each dialect may not call, shared by the guard and the engines.

Kept free of sqlglot so that a worker process, which only runs engines, starts fast.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DialectRules:
    """What one engine can reach beyond its database file, by function name (lower case)."""

    blocked_functions: frozenset[str]
    blocked_prefixes: tuple[str, ...] = ()
    blocked_suffixes: tuple[str, ...] = ()
    # DuckDB "replacement scans" read a file named in FROM: ``FROM 'data.csv'``.
    quoted_paths_are_files: bool = False


# Functions that touch files, extensions, the environment, secrets or sequences, or run SQL
# from a string (which would bypass the guard). Refused in every dialect: a name that does not
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
_POSTGRES_BLOCKED = frozenset(
    {
        "set_config", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf",
        "pg_rotate_logfile", "pg_notify", "pg_stat_file", "pg_promote", "pg_switch_wal",
        "pg_create_restore_point", "pg_export_snapshot", "pg_import_system_collations",
        "pg_log_backend_memory_contexts", "pg_logical_emit_message", "pg_current_logfile",
        "loread", "lowrite", "currval", "lastval", "txid_current", "pg_current_xact_id",
        "table_to_xml", "table_to_xmlschema", "table_to_xml_and_xmlschema", "database_to_xml",
        "database_to_xmlschema", "database_to_xml_and_xmlschema", "schema_to_xml",
        "schema_to_xmlschema", "schema_to_xml_and_xmlschema", "pg_prewarm",
    }
)
_POSTGRES_PREFIXES = (
    "pg_read_", "pg_ls_", "pg_file_", "lo_", "be_lo_", "dblink", "postgres_fdw", "pg_advisory",
    "pg_try_advisory", "pg_stat_reset", "pg_backup_", "pg_start_backup", "pg_stop_backup",
    "pg_create_", "pg_drop_replication", "pg_replication_", "pg_logical_slot_", "pg_copy_",
    "pg_wal_replay_", "query_to_", "cursor_to_", "binary_upgrade_", "pg_sequence_",
)
# fmt: on

DIALECT_RULES: dict[str, DialectRules] = {
    "sqlite": DialectRules(
        blocked_functions=_COMMON_BLOCKED,
        blocked_prefixes=("shell_", "sqlar_", "read_"),
    ),
    "duckdb": DialectRules(
        # glob() lists files in DuckDB; in SQLite it is the harmless GLOB string match.
        # setseed() changes the connection's random sequence: state that outlives the query.
        blocked_functions=_COMMON_BLOCKED | {"glob", "setseed"},
        blocked_prefixes=("read_",),
        blocked_suffixes=("_scan", "_query"),
        quoted_paths_are_files=True,
    ),
    # A server: files and programs on its host, other databases (dblink, postgres_fdw), other
    # sessions (signals, advisory locks, notifications), the session's own settings and role,
    # large objects, replication, and SQL run from a string (query_to_xml & co.).
    "postgres": DialectRules(
        blocked_functions=_COMMON_BLOCKED | _POSTGRES_BLOCKED,
        blocked_prefixes=_POSTGRES_PREFIXES,
    ),
}


def rules_for(dialect: str) -> DialectRules:
    try:
        return DIALECT_RULES[dialect]
    except KeyError:
        raise ValueError(
            f"no sandbox rules for dialect {dialect!r}; known: {sorted(DIALECT_RULES)}"
        ) from None


def is_blocked_name(name: str, rules: DialectRules) -> bool:
    """``name`` in lower case."""
    return (
        name in rules.blocked_functions
        or name.startswith(rules.blocked_prefixes)
        or name.endswith(rules.blocked_suffixes)
    )


def is_blocked_function(name: str, dialect: str) -> bool:
    """Whether the guard refuses a call to ``name`` (any case) in ``dialect``."""
    return is_blocked_name(name.lower(), rules_for(dialect))
