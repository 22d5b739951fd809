"""The sandbox on a real PostgreSQL server (``tests/conftest.py``): hostile statements refused
with a typed error and every table unchanged, deadlines, caps, the pool's bound, the role
check, and the server killed mid-run."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.sandbox import LocalSandboxPool, Sandbox, UnsafeRole
from pipelines.sandbox.errors import ReadOnlyViolation
from pipelines.sandbox.postgres import PostgresEngine, redacted

TIMEOUT_S = 1.0


def checksums(server, database: str = "typed") -> dict[str, object]:
    """md5 of every user table's rows, the user objects, large objects and the reader's role."""
    with server.admin(database) as conn:
        tables = conn.execute(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
        ).fetchall()
        found: dict[str, object] = {
            name: conn.execute(
                f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {name} t"
            ).fetchone()[0]
            for (name,) in tables
        }
        found["objects"] = conn.execute(
            "SELECT array_agg(n.nspname || '.' || c.relname ORDER BY 1) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
        ).fetchone()[0]
        found["large_objects"] = conn.execute(
            "SELECT count(*) FROM pg_largeobject_metadata"
        ).fetchone()[0]
        found["reader"] = conn.execute(
            "SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = 'reader'"
        ).fetchone()
    return found


MARKER = Path("/tmp/scale-analytics-pg-hostile-marker")

# Each hostile statement, and the error kind the sandbox must give it.
HOSTILE = [
    (f"COPY members TO PROGRAM 'touch {MARKER}'", "read_only_violation"),
    (f"COPY (SELECT 1) TO '{MARKER}'", "read_only_violation"),
    ("COPY members FROM PROGRAM 'echo 9'", "read_only_violation"),
    ("SELECT pg_read_file('/etc/passwd')", "read_only_violation"),
    ("SELECT pg_read_binary_file('/etc/passwd')", "read_only_violation"),
    ("SELECT * FROM pg_ls_dir('.')", "read_only_violation"),
    ("SELECT lo_import('/etc/passwd')", "read_only_violation"),
    (f"SELECT lo_export(1, '{MARKER}')", "read_only_violation"),
    (
        "SELECT dblink_exec('dbname=typed user=postgres', 'DELETE FROM claims')",
        "read_only_violation",
    ),
    ("SELECT * FROM dblink('dbname=typed', 'SELECT 1') AS t(a int)", "read_only_violation"),
    ("SELECT postgres_fdw_handler()", "read_only_violation"),
    ("SET ROLE postgres", "read_only_violation"),
    ("SET SESSION AUTHORIZATION postgres", "read_only_violation"),
    ("RESET ROLE", "read_only_violation"),
    ("SELECT set_config('transaction_read_only', 'off', true)", "read_only_violation"),
    ("SELECT pg_terminate_backend(pg_backend_pid())", "read_only_violation"),
    ("SELECT pg_cancel_backend(pg_backend_pid())", "read_only_violation"),
    ("SELECT pg_advisory_lock(1)", "read_only_violation"),
    ("SELECT pg_try_advisory_xact_lock(1)", "read_only_violation"),
    ("LISTEN alarms", "read_only_violation"),
    ("NOTIFY alarms", "read_only_violation"),
    ("SELECT pg_notify('alarms', 'x')", "read_only_violation"),
    ("CALL wipe()", "read_only_violation"),
    ("DO $$BEGIN DELETE FROM claims; END$$", "read_only_violation"),
    ("SELECT wipe_claims()", "read_only_violation"),
    ('SELECT "wipe_claims"()', "read_only_violation"),
    ("SELECT count(*) FROM members WHERE public.wipe_claims() > 0", "read_only_violation"),
    ("SELECT query_to_xml('DELETE FROM claims', true, true, '')", "read_only_violation"),
    ("DELETE FROM claims", "read_only_violation"),
    ("WITH d AS (DELETE FROM claims RETURNING *) SELECT count(*) FROM d", "read_only_violation"),
    ("SELECT 1; DELETE FROM claims", "read_only_violation"),
    ("SELECT * FROM claims FOR UPDATE", "read_only_violation"),
    ("CREATE TABLE evil (a int)", "read_only_violation"),
    ("CREATE TEMP TABLE evil AS SELECT 1 AS a", "read_only_violation"),
    ("PREPARE p AS DELETE FROM claims", "read_only_violation"),
    ("EXPLAIN ANALYZE DELETE FROM claims", "read_only_violation"),
    ("VACUUM claims", "read_only_violation"),
    ("LOCK TABLE claims", "read_only_violation"),
    ("SELECT nextval('claims_claim_id_seq')", "read_only_violation"),
    ("SELECT txid_current()", "read_only_violation"),
    ("BEGIN", "read_only_violation"),
    ("COMMIT", "read_only_violation"),
    ("SELECT pg_sleep(30)", "timeout"),
]


@pytest.fixture(scope="module")
def typed(postgres) -> DatabaseRef:
    return postgres.ref("typed")


def test_hostile_statements_are_refused_and_change_nothing(postgres, typed):
    before = checksums(postgres)
    rows = []
    with Sandbox(timeout_s=TIMEOUT_S, row_cap=100) as sandbox:
        for sql, kind in HOSTILE:
            started = time.monotonic()
            result = sandbox.execute(sql, typed)
            rows.append((sql, result.error_kind, time.monotonic() - started))
            assert result.error_kind == kind, (sql, result.error)
            assert result.rows == () and result.error
        # the sandbox still answers afterwards
        assert sandbox.execute("SELECT count(*) FROM claims", typed).rows == ((3,),)
    assert checksums(postgres) == before
    assert not MARKER.exists()
    assert max(seconds for _, _, seconds in rows) < 2 * TIMEOUT_S  # pg_sleep stopped in time


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM claims",
        "WITH d AS (DELETE FROM claims RETURNING *) SELECT count(*) FROM d",
        "SELECT 1; DELETE FROM claims",
        "SELECT wipe_claims()",
        "UPDATE members SET plan = 'gold'",
        "SELECT * FROM claims FOR UPDATE",
        "CREATE TABLE evil (a int)",
    ],
)
def test_the_engine_alone_refuses_writes(postgres, typed, sql):
    """Without the guard: the cursor, the READ ONLY transaction and the role still refuse."""
    before = checksums(postgres)
    engine = PostgresEngine(typed.path)
    try:
        with pytest.raises(ReadOnlyViolation):
            engine.run(sql, timeout_s=5, row_cap=10)
    finally:
        engine.close()
    assert checksums(postgres) == before


def test_answers_typed_values_canonically(typed):
    with Sandbox(timeout_s=5) as sandbox:
        result = sandbox.execute(
            "SELECT m.full_name, m.tags, c.status, c.amount, c.filed_at, i.paid "
            "FROM members m JOIN claims c USING (member_id) "
            "LEFT JOIN billing.invoices i USING (claim_id) ORDER BY c.claim_id",
            typed,
        )
    assert result.ok, result.error
    assert result.columns == ("full_name", "tags", "status", "amount", "filed_at", "paid")
    assert result.rows[0][0] == "Ada Park" and result.rows[0][2] == "approved"
    assert result.rows[0][3] == 120.5 and result.rows[0][5] == 1


def test_deadline_row_cap_and_byte_budget(typed):
    slow = "SELECT count(*) FROM generate_series(1, 100000000) a, generate_series(1, 1000) b"
    with Sandbox(timeout_s=TIMEOUT_S, row_cap=50, max_result_bytes=1 << 20) as sandbox:
        started = time.monotonic()
        result = sandbox.execute(slow, typed)
        assert result.error_kind == "timeout"
        assert time.monotonic() - started < 2 * TIMEOUT_S
        capped = sandbox.execute("SELECT g FROM generate_series(1, 100000) g", typed)
        assert capped.row_count == 50 and capped.truncated
        huge = sandbox.execute("SELECT repeat('x', 100000) FROM generate_series(1, 1000)", typed)
        assert huge.error_kind == "resource_limit" and "byte budget" in huge.error
        # the connection goes on serving
        assert sandbox.execute("SELECT 1 AS one", typed).rows == ((1,),)


def test_the_pool_bounds_the_connections(postgres, typed):
    typed = typed.model_copy(update={"path": typed.path + "?application_name=pool_bound"})
    pool = LocalSandboxPool.create(size=6, timeout_s=10, pool_size=2)
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        with postgres.admin() as conn:
            while not stop.is_set():
                (count,) = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pool_bound'"
                ).fetchone()
                seen.append(count)
                time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        import asyncio

        async def run() -> list:
            return await asyncio.gather(
                *(pool.execute("SELECT pg_sleep(0.2), 1", typed) for _ in range(6))
            )

        results = asyncio.run(run())
    finally:
        stop.set()
        watcher.join()
        pool.close()
    assert all(r.ok for r in results), [r.error for r in results]
    assert max(seen) <= 2 and max(seen) >= 1


def test_a_role_that_can_write_is_refused_unless_allowed(postgres):
    superuser = postgres.ref("typed", user="postgres")
    with Sandbox(timeout_s=5) as sandbox:
        with pytest.raises(UnsafeRole) as refused:
            sandbox.check_database(superuser)
        message = str(refused.value)
        assert "\n" not in message and "superuser" in message and "allow_write_role" in message
        result = sandbox.execute("SELECT 1", superuser)
        assert result.error_kind == "unsafe_role"
    with Sandbox(timeout_s=5, allow_write_role=True) as allowed:
        assert allowed.execute("SELECT 1 AS one", superuser).rows == ((1,),)


def test_a_password_never_shows_in_messages():
    location = "postgresql://reader:s3cret@127.0.0.1:1/nowhere"
    assert redacted(location) == "postgresql://reader:***@127.0.0.1:1/nowhere"
    db = DatabaseRef(db_id="nowhere", path=location, dialect="postgres")
    with Sandbox(timeout_s=5) as sandbox:
        result = sandbox.execute("SELECT 1", db)
    assert result.error_kind == "database_unavailable" and "s3cret" not in result.error


def test_the_server_killed_mid_run(postgres, typed):
    """Each question while it is down gets a typed error at once; the run goes on and answers
    again once it is back."""
    with Sandbox(timeout_s=TIMEOUT_S) as sandbox:
        assert sandbox.execute("SELECT count(*) FROM members", typed).rows == ((3,),)
        postgres.stop()
        try:
            kinds = []
            for _ in range(3):
                started = time.monotonic()
                result = sandbox.execute("SELECT count(*) FROM members", typed)
                kinds.append(result.error_kind)
                assert time.monotonic() - started < 2 * TIMEOUT_S + 5  # one connect attempt
        finally:
            postgres.start()
        assert kinds == ["database_unavailable"] * 3
        assert sandbox.execute("SELECT count(*) FROM members", typed).rows == ((3,),)
