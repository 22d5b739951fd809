"""Pools of sandboxes behind one async interface, in-process or as Ray actors.

    await pool.execute(sql, db) ──► least-busy worker ──► Sandbox.execute ──► ExecutionResult

``LocalSandboxPool`` runs a ``Sandbox`` on its own bounded thread pool; ``SandboxPool`` fans
out to ``size`` Ray actors, each holding a ``Sandbox``. Callers depend on ``ExecutionPool``
only. Ray is imported when a Ray pool is created, so the in-process path never pays for it.

Example::

    >>> pool = LocalSandboxPool.create(size=2, timeout_s=5)
    >>> (await pool.execute("SELECT 1", db)).rows
    ((1,),)
    >>> pool.close()
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from pipelines.contracts import DatabaseRef, ExecutionResult
from pipelines.sandbox.sandbox import Sandbox


class ExecutionPool(Protocol):
    size: int

    async def execute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult: ...

    def close(self) -> None: ...


def _check_size(size: int) -> None:
    if size < 1:
        raise ValueError(f"pool size must be >= 1, got {size}")


class LocalSandboxPool:
    """An in-process pool: one ``Sandbox`` and ``size`` worker threads (so ``size`` queries
    run at once, each thread with its own connections)."""

    def __init__(self, size: int = 2, timeout_s: float = 30.0, row_cap: int = 10_000) -> None:
        _check_size(size)
        self.size = size
        self._sandbox = Sandbox(timeout_s=timeout_s, row_cap=row_cap)
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="sandbox")

    @classmethod
    def create(
        cls, size: int = 2, timeout_s: float = 30.0, row_cap: int = 10_000
    ) -> LocalSandboxPool:
        return cls(size=size, timeout_s=timeout_s, row_cap=row_cap)

    async def execute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        call = functools.partial(self._sandbox.execute, sql, db, timeout_s=timeout_s)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self._sandbox.close()


class SandboxActor:
    """The body of one Ray sandbox actor (wrapped with ``ray.remote`` by ``SandboxPool``)."""

    def __init__(self, timeout_s: float, row_cap: int) -> None:
        self._sandbox = Sandbox(timeout_s=timeout_s, row_cap=row_cap)

    async def execute(
        self, sql: str, db: DatabaseRef, timeout_s: float | None = None
    ) -> ExecutionResult:
        return await self._sandbox.aexecute(sql, db, timeout_s=timeout_s)


class SandboxPool:
    """``size`` Ray actors running sandboxes; each call goes to the actor with the fewest
    calls in flight (ties in turn). Needs ``ray.init(...)`` first."""

    def __init__(self, actors: list[Any]) -> None:
        _check_size(len(actors))
        self.size = len(actors)
        self._actors = actors
        self._in_flight = [0] * len(actors)
        self._turn = itertools.count()

    @classmethod
    def create(
        cls,
        size: int = 2,
        timeout_s: float = 30.0,
        row_cap: int = 10_000,
        *,
        num_cpus: float = 0.25,
        max_concurrency: int = 4,
    ) -> SandboxPool:
        import ray

        _check_size(size)
        if not ray.is_initialized():
            raise RuntimeError(
                "SandboxPool needs a running Ray: call ray.init(...) first "
                "(locally: RAY_AUTH_MODE=disabled, ray.init(num_cpus=2, include_dashboard=False))"
            )
        Sandbox(timeout_s=timeout_s, row_cap=row_cap)  # fail fast here on bad limits
        actor_class = ray.remote(num_cpus=num_cpus, max_concurrency=max_concurrency)(SandboxActor)
        return cls([actor_class.remote(timeout_s, row_cap) for _ in range(size)])

    def _pick(self) -> int:
        start = next(self._turn) % self.size
        order = [(start + offset) % self.size for offset in range(self.size)]
        return min(order, key=lambda index: self._in_flight[index])

    async def execute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        if not self._actors:
            raise RuntimeError("SandboxPool is closed")
        index = self._pick()
        self._in_flight[index] += 1
        try:
            return await self._actors[index].execute.remote(sql, db, timeout_s)
        finally:
            self._in_flight[index] -= 1

    def close(self) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor)
        self._actors = []
