"""A real PostgreSQL server for the tests that name ``postgres`` (started on first use, once per
session, by the project's own ``.ci/postgres.sh`` on a private port and directory; stopped at
the end). It holds two databases, each readable by the SELECT-only role ``reader``:

- ``typed``: ``tests/postgres/typed.sql`` (ENUM and CHECK vocabularies, comments, arrays, JSON,
  a composite type, a second schema, a function that writes, the database's own function
  ``fiscal_year`` and ``payroll_key``, which ``reader`` may not execute);
- ``claims``: the demo benchmark's database, copied by ``eval.server_copy`` (the ``claims_pg``
  fixture; built on first use).

Tests that need it skip, saying why, only where the server binaries are missing and cannot be
installed.

An S3-compatible server for the tests that name ``s3`` (moto's server mode, a dev dependency:
a process of its own on a free localhost port, started once per session); ``s3_root`` is a
storage URI in a bucket of its own.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from pipelines.contracts import DatabaseRef

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "postgres.sh"
TYPED_SQL = Path(__file__).resolve().parent / "postgres" / "typed.sql"
READER = "reader"

# What the documentation tells a user to run for the sandbox's role (docs/postgres.md).
READER_GRANTS = """
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE CREATE, TEMPORARY ON DATABASE {db} FROM PUBLIC;
GRANT CONNECT ON DATABASE {db} TO reader;
GRANT USAGE ON SCHEMA {schemas} TO reader;
GRANT SELECT ON ALL TABLES IN SCHEMA {schemas} TO reader;
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """The running test server: URIs of its databases, and stop/start for restart tests."""

    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.port = port

    def uri(self, database: str, user: str = READER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def ref(self, database: str, user: str = READER) -> DatabaseRef:
        return DatabaseRef(db_id=database, path=self.uri(database, user), dialect="postgres")

    def admin(self, database: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.uri(database, "postgres"), autocommit=True)

    def start(self) -> None:
        subprocess.run(
            ["bash", str(SCRIPT), "start", str(self.directory), str(self.port)],
            check=True,
            capture_output=True,
            text=True,
        )

    def stop(self) -> None:
        subprocess.run(["bash", str(SCRIPT), "stop", str(self.directory)], check=True)

    def grant_reader(self, name: str, schemas: str = "public") -> None:
        with self.admin(name) as conn:
            conn.execute(READER_GRANTS.format(db=name, schemas=schemas))


@pytest.fixture(scope="session")
def postgres() -> PostgresServer:
    directory = Path(tempfile.mkdtemp(prefix="scale-pg-"))  # outside pytest's private tmp
    server = PostgresServer(directory, _free_port())
    try:
        server.start()
    except subprocess.CalledProcessError as error:
        if error.returncode == 3:
            pytest.skip(f"no PostgreSQL server: {error.stderr.strip()}")
        raise RuntimeError(f".ci/postgres.sh start failed: {error.stderr.strip()}") from error
    try:
        with server.admin() as conn:
            conn.execute(f"CREATE ROLE {READER} LOGIN")
            conn.execute("CREATE DATABASE typed")
        with server.admin("typed") as conn:
            conn.execute(TYPED_SQL.read_text())
            # Another database reached from inside a query: refused by the sandbox.
            conn.execute("CREATE EXTENSION IF NOT EXISTS dblink")
        server.grant_reader("typed", "public, billing")
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory):
    """One demo benchmark build per test session (a few seconds), shared read-only."""
    from eval.demo import build_demo

    return build_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def claims_pg(postgres: PostgresServer, demo):
    """(the demo benchmark's SQLite database, its copy on the server as ``reader`` sees it)."""
    from eval.server_copy import copy_to_server

    source = demo.database_ref()
    copy_to_server(source, postgres.uri("claims", "postgres"))
    postgres.grant_reader("claims")
    return source, postgres.ref("claims").model_copy(
        update={"description_dir": source.description_dir}
    )


class S3Server:
    """The moto server: its endpoint, and the environment that points ``pyarrow.fs`` (and any
    AWS client) at it, as a cluster's nodes would be pointed at their object store."""

    def __init__(self, port: int) -> None:
        self.endpoint = f"http://127.0.0.1:{port}"
        self.env = {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def bucket(self) -> str:
        """A new, empty bucket's name."""
        from pyarrow import fs

        name = f"sa-{uuid.uuid4().hex[:12]}"
        host = self.endpoint.removeprefix("http://")
        fs.S3FileSystem(
            endpoint_override=host, scheme="http", allow_bucket_creation=True
        ).create_dir(name)
        return name


@pytest.fixture(scope="session")
def s3():
    port = _free_port()
    log = tempfile.TemporaryFile()  # one line per request: a pipe nobody reads would fill up
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            log.seek(0)
            assert server.poll() is None, log.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the moto server did not listen within 30 s"
            time.sleep(0.2)
    s3 = S3Server(port)
    saved = {name: os.environ.get(name) for name in s3.env}
    os.environ.update(s3.env)
    try:
        yield s3
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.terminate()
        server.wait(timeout=10)
        log.close()


@pytest.fixture
def s3_root(s3: S3Server) -> str:
    """``s3://<a new bucket>/sa``: a run's storage on the moto server."""
    return f"s3://{s3.bucket()}/sa"
