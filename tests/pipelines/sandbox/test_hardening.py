"""The sandbox fails closed and every query is bounded in time, memory and result size.

Each hostile query is followed by a probe that shows nothing changed. Memory bombs run under
small budgets (``memory_mb``, ``max_result_bytes``, ``max_value_bytes``) so the test machine
never feels them; deadline bombs under short timeouts.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from core.config import section
from pipelines.sandbox import (
    ReadOnlyViolation,
    ResourceLimit,
    Sandbox,
    SandboxLimits,
    SandboxPool,
    SandboxSettings,
    SQLExecutionError,
)
from pipelines.sandbox import sandbox as sandbox_module
from pipelines.sandbox.duckdb import DuckDBEngine
from pipelines.sandbox.guard import ApprovalCache
from pipelines.sandbox.sqlite import SQLiteEngine

# sqlglot's tokenizer misses a nested "/*" that overlaps the "*/" before it ("*/*"), DuckDB's
# lexer does not: sqlglot reads one SELECT and a comment, DuckDB three statements.
SMUGGLE = "SELECT 1 /* /* */* */ ; {payload}; SELECT 1 -- */"
PAYLOADS = [
    "CREATE TEMP VIEW singer AS SELECT 99 AS id",
    "CREATE TEMP MACRO smuggled() AS 42",
    "CREATE TEMP TABLE smuggled AS SELECT 1 AS a",
    "SET VARIABLE smuggled = 1",
]
# DuckDB reads "/*/* */ */" as one nested comment; sqlglot misses a "/*" right after "/*"
# and fails to parse the rest: a string only the engine can read.
ONLY_DUCKDB_PARSES = "SELECT 41 /*/* */ */ + 1"

# One function call that runs for seconds: instr() over an 800k-character haystack and a
# 400k-character needle that never matches (memcmp at every position). Values stay far
# below the length limit; SQLite's progress handler never runs inside the call.
SQLITE_SLOW_CALL = (
    "SELECT instr(replace(hex(zeroblob(400000)), '0', 'a'),"
    " replace(hex(zeroblob(200000)), '0', 'a') || 'b')"
)
TIMEOUT_S = 0.5
MARGIN_S = 1.5  # process kill, reaping, a loaded 2-core machine


def _probe_unchanged(sandbox: Sandbox, db) -> None:
    assert sandbox.execute("SELECT count(*) FROM singer", db).rows == ((6,),)
    if db.dialect == "duckdb":
        temps = sandbox.execute(
            "SELECT (SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal)"
            " + (SELECT count(*) FROM duckdb_tables() WHERE temporary)"
            " + (SELECT count(*) FROM duckdb_functions() WHERE function_name = 'smuggled')",
            db,
        )
        assert temps.rows == ((0,),), temps.error
        assert sandbox.execute("SELECT smuggled()", db).error_kind == "sql_error"
        assert sandbox.execute("SELECT getvariable('smuggled')", db).rows == ((None,),)
    else:
        temps = sandbox.execute("SELECT count(*) FROM sqlite_temp_master", db)
        assert temps.rows == ((0,),), temps.error


# --- 1. fails closed, no state survives ----------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS)
def test_smuggled_statement_is_refused_and_leaves_nothing(db_ref, payload):
    with Sandbox(timeout_s=10, row_cap=100) as sandbox:
        assert sandbox.execute("SELECT count(*) FROM singer", db_ref).rows == ((6,),)
        result = sandbox.execute(SMUGGLE.format(payload=payload), db_ref)
        assert result.error_kind == "read_only_violation", result
        _probe_unchanged(sandbox, db_ref)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_duckdb_engine_alone_runs_only_one_select(duckdb_ref, payload):
    engine = DuckDBEngine(duckdb_ref.path)
    try:
        with pytest.raises(ReadOnlyViolation, match="multiple statements"):
            engine.run(SMUGGLE.format(payload=payload), timeout_s=5, row_cap=10)
        assert engine.run("SELECT count(*) FROM singer", timeout_s=5, row_cap=10).rows == ((6,),)
    finally:
        engine.close()


@pytest.mark.parametrize(
    ("sql", "offender"),
    [
        ("SELECT 1; SELECT 2", "multiple statements"),
        ("CREATE TEMP VIEW v AS SELECT 1", "CREATE"),
        ("SET VARIABLE v = 1", "SET"),
        ("EXPLAIN SELECT 1", "EXPLAIN"),
    ],
)
def test_duckdb_engine_refuses_what_its_parser_sees_as_not_one_select(duckdb_ref, sql, offender):
    engine = DuckDBEngine(duckdb_ref.path)
    try:
        with pytest.raises(ReadOnlyViolation) as caught:
            engine.run(sql, timeout_s=5, row_cap=10)
        assert caught.value.offender == offender
    finally:
        engine.close()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; SELECT 2",
        "CREATE TEMP VIEW v AS SELECT 1",
        "CREATE TEMP TABLE t AS SELECT 1 AS a",
        "PRAGMA temp_store = FILE",
        "PRAGMA cache_size = 100000000",
    ],
)
def test_sqlite_engine_alone_allows_no_temp_objects_or_pragmas(sqlite_ref, sql):
    engine = SQLiteEngine(sqlite_ref.path)
    try:
        with pytest.raises(ReadOnlyViolation):
            engine.run(sql, timeout_s=5, row_cap=10)
        probe = engine.run("SELECT count(*) FROM sqlite_temp_master", timeout_s=5, row_cap=10)
        assert probe.rows == ((0,),)
    finally:
        engine.close()


def test_untokenizable_sql_is_refused_on_sqlite_never_run(sqlite_ref):
    # sqlglot cannot tokenize an unterminated comment; SQLite would run it.
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        result = sandbox.execute("SELECT count(*) FROM singer /* unterminated", sqlite_ref)
        assert result.error_kind == "read_only_violation"
        assert "cannot parse" in result.error and result.rows == ()
        _probe_unchanged(sandbox, sqlite_ref)


def test_sql_only_duckdb_parses_is_refused_never_run(duckdb_ref):
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        result = sandbox.execute(ONLY_DUCKDB_PARSES, duckdb_ref)
        assert result.error_kind == "read_only_violation" and result.rows == ()


def test_a_string_the_guard_cannot_parse_never_runs(db_ref, monkeypatch):
    # Whatever makes sqlglot fail, the statement is not handed to the engine.
    from sqlglot.errors import ParseError

    ran = []
    real_run = sandbox_module._InProcesses.run

    def spy(self, *args, **kwargs):
        ran.append(args)
        return real_run(self, *args, **kwargs)

    def cannot_parse(sql, dialect):
        raise ParseError("pretend sqlglot cannot parse this")

    monkeypatch.setattr(sandbox_module._InProcesses, "run", spy)
    monkeypatch.setattr(sandbox_module, "check_read_only", cannot_parse)
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        refused = sandbox.execute("SELECT count(*) FROM singer WHERE id > 3", db_ref)
        syntax = sandbox.execute("SELEC count(*) FROM singer", db_ref)
    assert refused.error_kind == "read_only_violation"
    assert syntax.error_kind == "sql_error" and "SELEC" in syntax.error  # the engine's words
    assert ran == []


def test_setseed_is_refused_on_duckdb(duckdb_ref):
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        result = sandbox.execute("SELECT setseed(0.5)", duckdb_ref)
    assert result.error_kind == "read_only_violation"


def test_sqlglot_crashing_fails_closed(sqlite_ref, monkeypatch):
    def crash(sql, dialect):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(sandbox_module, "check_read_only", crash)
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        # a string no other test runs: the guard's approval cache is process-wide
        assert (
            sandbox.execute("SELECT 1 AS crash_probe", sqlite_ref).error_kind
            == "read_only_violation"
        )


# --- 2. bounds that hold -------------------------------------------------------------------------


def test_single_expensive_call_is_stopped_at_the_deadline(sqlite_ref):
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        assert sandbox.execute("SELECT 1", sqlite_ref).ok
        before = sandbox.worker_pids
        started = time.monotonic()
        result = sandbox.execute(SQLITE_SLOW_CALL, sqlite_ref, timeout_s=TIMEOUT_S)
        elapsed = time.monotonic() - started
        assert result.error_kind == "timeout"
        assert elapsed < TIMEOUT_S + sandbox.limits.kill_grace_s + MARGIN_S
        # The worker stuck in the call was killed; the next query gets a fresh one.
        assert sandbox.execute("SELECT count(*) FROM singer", sqlite_ref).rows == ((6,),)
        assert sandbox.worker_pids and set(sandbox.worker_pids).isdisjoint(before)


def test_killed_worker_is_an_error_result_then_replaced(sqlite_ref):
    with Sandbox(timeout_s=30, row_cap=10) as sandbox:
        assert sandbox.execute("SELECT 1", sqlite_ref).ok
        (pid,) = sandbox.worker_pids
        threading.Timer(0.3, os.kill, (pid, signal.SIGKILL)).start()
        result = sandbox.execute(SQLITE_SLOW_CALL, sqlite_ref)
        assert result.error_kind == "resource_limit" and "died" in result.error
        assert "signal 9" in result.error
        assert sandbox.execute("SELECT count(*) FROM singer", sqlite_ref).rows == ((6,),)


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("sqlite", "SELECT randomblob(20000) FROM numbers"),
        ("duckdb", "SELECT repeat('x', 20000) FROM numbers"),
        ("duckdb", "SELECT list(range) FROM range(100000), (SELECT 1 FROM numbers LIMIT 50)"),
    ],
)
def test_fetching_stops_at_the_byte_budget(request, dialect, sql):
    db = request.getfixturevalue(f"{dialect}_ref")
    with Sandbox(timeout_s=10, row_cap=10_000, max_result_bytes=1 << 20) as sandbox:
        started = time.monotonic()
        result = sandbox.execute(sql, db)
        assert result.error_kind == "resource_limit"
        assert "1048576 byte budget" in result.error and result.rows == ()
        assert time.monotonic() - started < 5
        # Under the budget, the same kind of query still answers.
        small = sandbox.execute("SELECT count(*) FROM singer", db)
        assert small.rows == ((6,),)


def test_byte_budget_holds_in_the_engine_alone(sqlite_ref):
    engine = SQLiteEngine(sqlite_ref.path)
    try:
        with pytest.raises(ResourceLimit):
            engine.run(
                "SELECT randomblob(20000) FROM numbers",
                timeout_s=5,
                row_cap=10_000,
                max_bytes=1 << 20,
            )
    finally:
        engine.close()


@pytest.mark.parametrize(
    "sql",
    [
        # 100 MB of zeroes, hex'd, doubled.
        "SELECT length(replace(hex(zeroblob(100000000)),'0','ab'))",
        "SELECT length(group_concat(randomblob(100000))) FROM numbers",
        # A recursive CTE growing one string each step.
        "WITH RECURSIVE r(n, s) AS (SELECT 1, '' UNION ALL"
        " SELECT n + 1, s || hex(randomblob(50000)) FROM r) SELECT max(length(s)) FROM r",
    ],
)
def test_sqlite_values_are_bounded_in_length(sqlite_ref, sql):
    with Sandbox(timeout_s=10, row_cap=10, max_value_bytes=1 << 20) as sandbox:
        started = time.monotonic()
        result = sandbox.execute(sql, sqlite_ref)
        assert result.error_kind == "resource_limit", result
        assert "too long" in result.error
        assert time.monotonic() - started < 3


def test_default_value_limit_stops_a_long_string(sqlite_ref):
    # 40 MB of hex, past the default 16 MiB.
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        result = sandbox.execute("SELECT length(hex(zeroblob(20000000)))", sqlite_ref)
    assert result.error_kind == "resource_limit"


def test_sqlite_connection_carries_the_limits(sqlite_ref):
    import sqlite3

    limits = SandboxLimits(max_value_bytes=1 << 20, max_sql_chars=5000)
    engine = SQLiteEngine(sqlite_ref.path, limits)
    connection = engine._connection
    try:
        assert connection.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 1 << 20
        assert connection.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED) == 0
        assert connection.getlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH) >= 5000
        connection.set_authorizer(None)  # the sandbox's own reading, past its authorizer
        assert connection.execute("PRAGMA temp_store").fetchone() == (2,)  # MEMORY
    finally:
        engine.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_large_sort_spills_to_no_temp_file(sqlite_ref):
    # Plain SQLite writes this sort to a hidden (deleted) temp file; the sandbox keeps temp
    # storage in memory, where the worker's limits bound it.
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for fd in os.listdir("/proc/self/fd"):
                try:
                    seen.add(os.readlink(f"/proc/self/fd/{fd}"))
                except OSError:
                    pass
            time.sleep(0.002)

    engine = SQLiteEngine(sqlite_ref.path)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = engine.run(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 300000)"
            " SELECT n FROM r ORDER BY randomblob(300) LIMIT 5 OFFSET 299990",
            timeout_s=20,
            row_cap=10,
        )
    finally:
        done.set()
        watcher.join()
        engine.close()
    assert len(result.rows) == 5
    assert [path for path in seen if "etilqs_" in path] == []  # SQLite's temp file prefix


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        # An endless sort: no row comes out before the last goes in; in memory (temp_store)
        # until SQLite's heap limit.
        (
            "sqlite",
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)"
            " SELECT n FROM r ORDER BY randomblob(100)",
        ),
        ("duckdb", "SELECT length(list(range)) FROM range(100000000)"),  # an 800 MB list
    ],
)
def test_engine_memory_is_bounded_in_the_worker(request, dialect, sql):
    db = request.getfixturevalue(f"{dialect}_ref")
    with Sandbox(timeout_s=20, row_cap=10, memory_mb=256) as sandbox:
        started = time.monotonic()
        result = sandbox.execute(sql, db)
        assert result.error_kind == "resource_limit", result
        assert "memory" in result.error
        assert time.monotonic() - started < 15
        assert sandbox.execute("SELECT count(*) FROM singer", db).rows == ((6,),)


def test_python_memory_of_the_worker_is_bounded(sqlite_ref):
    # A budget far above what the worker may hold: the process limit answers.
    with Sandbox(timeout_s=20, row_cap=10_000, memory_mb=192, max_result_bytes=4 << 30) as sandbox:
        result = sandbox.execute("SELECT randomblob(1000000) FROM numbers", sqlite_ref)
        assert result.error_kind == "resource_limit", result
        assert sandbox.execute("SELECT count(*) FROM singer", sqlite_ref).rows == ((6,),)


def _forked_child_runs(sandbox: Sandbox, db, replies) -> None:
    rows = sandbox.execute("SELECT 7", db).rows
    replies.put((os.getpid(), sandbox.worker_pids, rows))


def test_a_forked_child_never_uses_its_parents_workers(sqlite_ref):
    import multiprocessing

    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        assert sandbox.execute("SELECT 1", sqlite_ref).ok
        parent_workers = sandbox.worker_pids
        context = multiprocessing.get_context("fork")
        replies = context.Queue()
        child = context.Process(target=_forked_child_runs, args=(sandbox, sqlite_ref, replies))
        child.start()
        _, child_workers, rows = replies.get(timeout=30)
        child.join(timeout=30)
        assert rows == ((7,),)
        assert child_workers and set(child_workers).isdisjoint(parent_workers)
        assert sandbox.worker_pids == parent_workers  # the parent's worker is untouched
        assert sandbox.execute("SELECT 2", sqlite_ref).rows == ((2,),)


def test_an_interrupted_exchange_never_hands_over_a_stale_answer(sqlite_ref):
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        assert sandbox.execute("SELECT 1", sqlite_ref).ok
        worker = sandbox._runner.workers.current()

        def interrupted(_timeout):
            raise RuntimeError("interrupted while waiting for the answer")

        worker._replies.poll = interrupted  # the answer to 'first' stays in the pipe
        assert sandbox.execute("SELECT 'first'", sqlite_ref).error_kind == "sandbox_error"
        assert sandbox.execute("SELECT 'second'", sqlite_ref).rows == (("second",),)


def test_execute_never_raises_memory_error(sqlite_ref, monkeypatch):
    def exhausted(*_args, **_kwargs):
        raise MemoryError

    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        monkeypatch.setattr(sandbox._runner, "run", exhausted)
        result = sandbox.execute("SELECT 1", sqlite_ref)
        assert result.error_kind == "resource_limit" and result.hash.startswith("ERR:")
        monkeypatch.setattr(sandbox_module, "check_read_only", exhausted)
        sandbox_module.APPROVALS.clear()
        assert sandbox.execute("SELECT 2", sqlite_ref).error_kind == "resource_limit"


def test_execute_never_raises_on_a_bug(sqlite_ref, monkeypatch):
    def broken(*_args, **_kwargs):
        raise KeyError("a bug")

    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        monkeypatch.setattr(sandbox._runner, "run", broken)
        result = sandbox.execute("SELECT 1", sqlite_ref)
    assert result.error_kind == "sandbox_error" and "internal" in result.error


def test_guard_time_counts_against_the_deadline(db_ref, monkeypatch):
    real_check = sandbox_module.check_read_only

    def slow_check(sql, dialect):
        time.sleep(0.4)
        return real_check(sql, dialect)

    monkeypatch.setattr(sandbox_module, "check_read_only", slow_check)
    sandbox_module.APPROVALS.clear()
    with Sandbox(timeout_s=10, row_cap=10) as sandbox:
        started = time.monotonic()
        result = sandbox.execute("SELECT count(*) FROM singer WHERE age > 1", db_ref, timeout_s=0.2)
        assert result.error_kind == "timeout"
        assert "0.2 s limit" in result.error
        assert time.monotonic() - started < 0.4 + MARGIN_S


def test_long_sql_is_refused_before_parsing(sqlite_ref):
    sql = "SELECT 1 WHERE 1 IN (" + ", ".join(["1"] * 60_000) + ")"  # 180k characters
    with Sandbox(timeout_s=10, row_cap=10, max_sql_chars=100_000) as sandbox:
        started = time.monotonic()
        result = sandbox.execute(sql, sqlite_ref)
        assert result.error_kind == "resource_limit" and "characters" in result.error
        assert time.monotonic() - started < 0.1


def test_approval_cache_is_bounded_in_bytes():
    cache = ApprovalCache(max_bytes=10_000, max_entry_bytes=1_000)
    for n in range(1_000):
        cache.add(f"SELECT {n} FROM singer WHERE name = 'padding padding'", "sqlite")
    assert cache.size_bytes <= 10_000
    assert ("SELECT 999 FROM singer WHERE name = 'padding padding'", "sqlite") in cache
    assert ("SELECT 0 FROM singer WHERE name = 'padding padding'", "sqlite") not in cache
    cache.add("SELECT '" + "x" * 2_000 + "'", "sqlite")  # longer than an entry may be
    assert ("SELECT '" + "x" * 2_000 + "'", "sqlite") not in cache


def test_sandbox_approvals_stay_within_their_byte_bound(sqlite_ref):
    sandbox_module.APPROVALS.clear()
    with Sandbox(timeout_s=10, row_cap=10, isolation="inline") as sandbox:
        for n in range(300):
            sandbox.execute(f"SELECT {n}, '{'p' * 500}'", sqlite_ref)
    assert len(sandbox_module.APPROVALS) == 300
    assert sandbox_module.APPROVALS.size_bytes <= sandbox_module.APPROVALS.max_bytes
    long_sql = "SELECT '" + "q" * (sandbox_module.APPROVALS.max_entry_bytes + 10) + "'"
    with Sandbox(timeout_s=10, row_cap=10, isolation="inline") as sandbox:
        assert sandbox.execute(long_sql, sqlite_ref).ok
    assert (long_sql, "sqlite") not in sandbox_module.APPROVALS


def test_inline_isolation_keeps_the_other_bounds(sqlite_ref):
    with Sandbox(
        timeout_s=10, row_cap=10_000, max_result_bytes=1 << 20, isolation="inline"
    ) as sandbox:
        assert sandbox.worker_pids == []
        result = sandbox.execute("SELECT randomblob(20000) FROM numbers", sqlite_ref)
        assert result.error_kind == "resource_limit"
        assert sandbox.execute("SELECT count(*) FROM singer", sqlite_ref).rows == ((6,),)


def test_sandbox_section_gives_the_limits_without_preview_rows():
    cfg = {
        "pipeline": {"sandbox": {"timeout_s": 5, "row_cap": 7, "preview_rows": 3, "memory_mb": 512}}
    }
    settings = section(cfg, "pipeline.sandbox", SandboxSettings)
    limits = settings.limits
    assert (limits.timeout_s, limits.row_cap, limits.memory_mb) == (5, 7, 512)
    assert settings.preview_rows == 3 and type(limits) is SandboxLimits
    with pytest.raises(ValueError):  # a key that is no sandbox setting is an error, not ignored
        section({"pipeline": {"sandbox": {"timeout": 5}}}, "pipeline.sandbox", SandboxSettings)
    assert SandboxLimits(max_result_bytes=4096, max_value_bytes=1 << 20).max_value_bytes == 4096
    with pytest.raises(ValueError):
        Sandbox(memory_mb=1)
    with pytest.raises(ValueError):
        Sandbox(no_such_bound=1)


def test_strict_raises_the_new_typed_errors(sqlite_ref):
    with Sandbox(timeout_s=10, row_cap=10, max_value_bytes=1 << 20) as sandbox:
        with pytest.raises(ResourceLimit):
            sandbox.execute_strict("SELECT hex(zeroblob(2000000))", sqlite_ref)
        with pytest.raises(SQLExecutionError):
            sandbox.execute_strict("SELEC 1", sqlite_ref)


# --- Ray pool: restarts and routing around a dead actor ----------------------------------------


class _Actor:
    """A fake actor handle: answers, or fails the way a dead Ray actor does."""

    def __init__(self, name: str, dead: bool = False) -> None:
        self.name = name
        self.dead = dead
        self.calls = 0
        self.execute = self

    async def _answer(self):
        from ray.exceptions import ActorDiedError

        self.calls += 1
        if self.dead:
            raise ActorDiedError()
        return self.name

    def remote(self, sql, db, timeout_s):
        return self._answer()


async def test_pool_routes_around_a_dead_actor(sqlite_ref):
    now = [0.0]
    actors = [_Actor("a", dead=True), _Actor("b"), _Actor("c")]
    pool = SandboxPool(actors, down_for_s=5, clock=lambda: now[0])
    answers = [await pool.execute("SELECT 1", sqlite_ref) for _ in range(6)]
    assert "a" not in answers and set(answers) == {"b", "c"}
    assert actors[0].calls == 1  # tried once, then left out while down
    now[0] = 6.0  # back in the rotation once the cool-down passed (a restart may be done)
    actors[0].dead = False
    answers = [await pool.execute("SELECT 1", sqlite_ref) for _ in range(3)]
    assert "a" in answers


async def test_pool_with_no_live_actor_returns_an_error_result(sqlite_ref):
    pool = SandboxPool([_Actor("a", dead=True), _Actor("b", dead=True)])
    result = await pool.execute("SELECT 1", sqlite_ref)
    assert result.error_kind == "sandbox_error" and result.hash.startswith("ERR:")
    assert "no sandbox actor" in result.error


def test_ray_actors_restart_and_retry(monkeypatch):
    import ray

    captured = {}

    def fake_remote(**options):
        captured.update(options)

        def wrap(cls):
            class Handle:
                @staticmethod
                def remote(*args):
                    return ("actor", args)

            return Handle

        return wrap

    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "remote", fake_remote)
    pool = SandboxPool.create(size=2, timeout_s=5, row_cap=10, max_result_bytes=1 << 20)
    assert captured["max_restarts"] == -1 and captured["max_task_retries"] == 1
    assert pool.size == 2
    assert pool._actors[0][1] == (5, 10, {"max_result_bytes": 1 << 20})
