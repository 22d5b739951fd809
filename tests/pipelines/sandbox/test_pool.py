import asyncio
import os

import pytest

from pipelines.sandbox import LocalSandboxPool, Sandbox, SandboxPool

QUERIES = [
    "SELECT name FROM singer WHERE age > 30",
    "SELECT country, count(*) FROM singer GROUP BY country",
    "DROP TABLE singer",
    "SELECT nope FROM singer",
    "SELECT n FROM numbers",
]


def _expected(db):
    with Sandbox(timeout_s=10, row_cap=100) as sandbox:
        return [sandbox.execute(sql, db) for sql in QUERIES]


def _comparable(results):
    # Rows as a multiset: without ORDER BY, DuckDB's parallel GROUP BY returns groups in any order
    # (the result hash is order-free already).
    return [(r.hash, sorted(r.rows, key=repr), r.error_kind, r.truncated) for r in results]


async def test_local_pool_matches_the_sandbox(db_ref):
    pool = LocalSandboxPool.create(size=2, timeout_s=10, row_cap=100)
    try:
        results = await asyncio.gather(*(pool.execute(sql, db_ref) for sql in QUERIES))
    finally:
        pool.close()
    assert _comparable(results) == _comparable(_expected(db_ref))
    assert [r.error_kind for r in results][2:4] == ["read_only_violation", "sql_error"]
    assert results[4].truncated


async def test_local_pool_timeout_override(sqlite_ref):
    pool = LocalSandboxPool.create(size=1, timeout_s=30)
    try:
        result = await pool.execute(
            "SELECT count(*) FROM numbers a, numbers b, numbers c, numbers d",
            sqlite_ref,
            timeout_s=0.2,
        )
    finally:
        pool.close()
    assert result.error_kind == "timeout"


@pytest.mark.parametrize("pool_class", [LocalSandboxPool, SandboxPool])
def test_pool_size_must_be_positive(pool_class):
    with pytest.raises(ValueError, match="size"):
        pool_class.create(size=0)


def test_ray_pool_needs_a_running_ray(monkeypatch):
    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(RuntimeError, match="ray.init"):
        SandboxPool.create(size=1)


class _FakeActor:
    """Stands in for a Ray actor handle: each call waits on a future the test resolves."""

    def __init__(self) -> None:
        self.calls: list[asyncio.Future] = []
        self.execute = self  # handle.execute.remote(...)

    def remote(self, sql, db, timeout_s):
        future = asyncio.get_running_loop().create_future()
        self.calls.append(future)
        return future


async def test_ray_pool_sends_each_call_to_the_least_busy_actor(sqlite_ref):
    actors = [_FakeActor(), _FakeActor(), _FakeActor()]
    pool = SandboxPool(actors)
    pending = [asyncio.ensure_future(pool.execute("SELECT 1", sqlite_ref)) for _ in range(3)]
    await asyncio.sleep(0)
    assert [len(a.calls) for a in actors] == [1, 1, 1]  # idle actors first, in turn
    actors[1].calls[0].set_result("done")
    await pending[1]
    pending.append(asyncio.ensure_future(pool.execute("SELECT 2", sqlite_ref)))
    await asyncio.sleep(0)
    assert [len(a.calls) for a in actors] == [1, 2, 1]  # the only idle actor gets the next call
    for actor in actors:
        for call in actor.calls:
            if not call.done():
                call.set_result("done")
    assert await asyncio.gather(*pending) == ["done"] * 4
    assert pool._in_flight == [0, 0, 0]


@pytest.fixture(scope="module")
def ray_cluster():
    import ray

    if ray.is_initialized():  # another module's cluster: use it, leave it to its owner
        yield ray
        return
    previous = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    if previous is None:
        os.environ.pop("RAY_AUTH_MODE", None)
    else:
        os.environ["RAY_AUTH_MODE"] = previous


@pytest.mark.ray
async def test_ray_pool_matches_the_sandbox(ray_cluster, sqlite_ref, duckdb_ref):
    pool = SandboxPool.create(size=2, timeout_s=10, row_cap=100)
    try:
        for db in (sqlite_ref, duckdb_ref):
            results = await asyncio.gather(*(pool.execute(sql, db) for sql in QUERIES))
            assert _comparable(results) == _comparable(_expected(db))
        timed_out = await pool.execute(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
            sqlite_ref,
            timeout_s=0.3,
        )
        assert timed_out.error_kind == "timeout"
    finally:
        pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        await pool.execute("SELECT 1", sqlite_ref)


@pytest.mark.ray
async def test_ray_pool_routes_around_a_killed_actor_and_it_restarts(ray_cluster, sqlite_ref):
    pool = SandboxPool.create(size=2, timeout_s=10, row_cap=100)
    try:
        assert (await pool.execute("SELECT 1", sqlite_ref)).rows == ((1,),)
        ray_cluster.kill(pool._actors[0], no_restart=False)  # dies; max_restarts brings it back
        results = [await pool.execute(f"SELECT {n}", sqlite_ref) for n in range(6)]
        assert [r.rows for r in results] == [((n,),) for n in range(6)]
        # Back once restarted: the actor answers its own calls again.
        deadline = asyncio.get_running_loop().time() + 60
        while True:
            try:
                answer = await pool._actors[0].execute.remote("SELECT 42", sqlite_ref, None)
                break
            except ray_cluster.exceptions.RayActorError:
                assert asyncio.get_running_loop().time() < deadline, "actor 0 never restarted"
                await asyncio.sleep(0.5)
        assert answer.rows == ((42,),)
    finally:
        pool.close()
