"""Pools of sandboxes behind one async interface, in-process or as Ray actors.

    await pool.execute(sql, db) ──► least-busy worker ──► Sandbox.execute ──► ExecutionResult

``LocalSandboxPool`` runs a ``Sandbox`` on its own bounded thread pool; ``SandboxPool`` fans
out to ``size`` Ray actors, each holding a ``Sandbox``. Callers depend on ``ExecutionPool``
only. Ray is imported when a Ray pool is created, so the in-process path never pays for it.
Both take the sandbox's bounds as ``Sandbox`` does (``limits=``, or keywords such as
``max_result_bytes=…``); an unset bound is ``SandboxLimits``' default.

Ray actors restart when they die (``max_restarts``; a task caught in the death is retried
``max_task_retries`` times), and the pool routes around an actor that fails a call: it is
left out for ``down_for_s`` and the call goes to the next actor, each actor tried at most
once per call. When none answers, the call returns an error result (it never raises).

Example::

    >>> import asyncio
    >>> pool = LocalSandboxPool.create(size=2, timeout_s=5)
    >>> asyncio.run(pool.execute("SELECT count(*) FROM singer", db)).rows
    ((6,),)
    >>> pool.close()
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from pipelines.contracts import DatabaseRef, ExecutionResult
from pipelines.sandbox.canonical import error_hash
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

    def __init__(
        self,
        size: int = 2,
        timeout_s: float | None = None,
        row_cap: int | None = None,
        **bounds: Any,
    ) -> None:
        _check_size(size)
        self.size = size
        self._sandbox = Sandbox(timeout_s=timeout_s, row_cap=row_cap, **bounds)
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="sandbox")

    @classmethod
    def create(cls, *args: Any, **kwargs: Any) -> LocalSandboxPool:
        """The pool its constructor builds (``create`` is how either pool is made: the Ray
        one starts its actors there)."""
        return cls(*args, **kwargs)

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

    def __init__(
        self, timeout_s: float | None, row_cap: int | None, bounds: dict[str, Any] | None = None
    ) -> None:
        self._sandbox = Sandbox(timeout_s=timeout_s, row_cap=row_cap, **(bounds or {}))

    async def execute(
        self, sql: str, db: DatabaseRef, timeout_s: float | None = None
    ) -> ExecutionResult:
        return await self._sandbox.aexecute(sql, db, timeout_s=timeout_s)


def _is_actor_failure(error: Exception) -> bool:
    """A Ray error that means "this actor could not run the call", not "the query failed".
    (Ray is imported only once a call has failed.)"""
    from ray import exceptions

    return isinstance(
        error,
        (exceptions.RayActorError, exceptions.WorkerCrashedError, exceptions.OutOfMemoryError),
    )


class SandboxPool:
    """``size`` Ray actors running sandboxes; each call goes to the live actor with the fewest
    calls in flight (ties in turn). Needs ``ray.init(...)`` first."""

    def __init__(
        self,
        actors: list[Any],
        *,
        down_for_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _check_size(len(actors))
        self.size = len(actors)
        self._actors = actors
        self._in_flight = [0] * len(actors)
        self._down_until = [0.0] * len(actors)
        self._down_for_s = down_for_s
        self._clock = clock
        self._turn = itertools.count()

    @classmethod
    def create(
        cls,
        size: int = 2,
        timeout_s: float | None = None,
        row_cap: int | None = None,
        *,
        num_cpus: float = 0.25,
        max_concurrency: int = 4,
        max_restarts: int = -1,
        max_task_retries: int = 1,
        **bounds: Any,
    ) -> SandboxPool:
        import ray

        _check_size(size)
        if not ray.is_initialized():
            raise RuntimeError(
                "SandboxPool needs a running Ray: call ray.init(...) first "
                "(locally: RAY_AUTH_MODE=disabled, ray.init(num_cpus=2, include_dashboard=False))"
            )
        Sandbox(timeout_s=timeout_s, row_cap=row_cap, **bounds)  # fail fast here on bad limits
        actor_class = ray.remote(
            num_cpus=num_cpus,
            max_concurrency=max_concurrency,
            max_restarts=max_restarts,
            max_task_retries=max_task_retries,
        )(SandboxActor)
        return cls([actor_class.remote(timeout_s, row_cap, bounds) for _ in range(size)])

    def _pick(self, tried: set[int]) -> int | None:
        start = next(self._turn) % self.size
        order = [(start + offset) % self.size for offset in range(self.size)]
        untried = [i for i in order if i not in tried]
        if not untried:
            return None
        now = self._clock()
        # A down actor is still tried when every untried one is down: it may be back by now.
        live = [i for i in untried if self._down_until[i] <= now] or untried
        return min(live, key=lambda index: self._in_flight[index])

    async def execute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        if not self._actors:
            raise RuntimeError("SandboxPool is closed")
        tried: set[int] = set()
        failures: list[str] = []
        started = time.perf_counter()
        while (index := self._pick(tried)) is not None:
            tried.add(index)
            self._in_flight[index] += 1
            try:
                return await self._actors[index].execute.remote(sql, db, timeout_s)
            except Exception as error:
                if not _is_actor_failure(error):
                    raise
                self._down_until[index] = self._clock() + self._down_for_s
                failures.append(f"actor {index}: {type(error).__name__}")
            finally:
                self._in_flight[index] -= 1
        message = f"sandbox error: no sandbox actor could run the query ({'; '.join(failures)})"
        return ExecutionResult(
            error=message,
            error_kind="sandbox_error",
            hash=error_hash(message, db.path),
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )

    def close(self) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors = []
