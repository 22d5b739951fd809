"""The workers of a sandbox: one per calling thread (``WorkerSet``), and the idle workers of
closed sandboxes kept process-wide for the next one with the same process limits (``SPARES``).
A worker that was killed or died is replaced by a fresh one on the next call.
"""

from __future__ import annotations

import atexit
import threading

from pipelines.sandbox.limits import SandboxLimits
from pipelines.sandbox.worker_process import WorkerProcess, process_key

_MAX_SPARES_PER_KEY = 4


class _Spares:
    """Idle workers of closed sandboxes, per process key, for the next sandbox to reuse."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple[int, int, int], list[WorkerProcess]] = {}

    def take(self, key: tuple[int, int, int]) -> WorkerProcess | None:
        with self._lock:
            idle = self._idle.get(key, [])
            while idle:
                worker = idle.pop()
                if worker.alive and worker._process.poll() is None:
                    return worker
        return None

    def give(self, worker: WorkerProcess) -> None:
        if not worker.alive:
            return
        worker.close_engines()
        with self._lock:
            idle = self._idle.setdefault(worker.key, [])
            if len(idle) < _MAX_SPARES_PER_KEY:
                idle.append(worker)
                return
        worker.stop()

    def stop_all(self) -> None:
        with self._lock:
            workers = [w for idle in self._idle.values() for w in idle]
            self._idle.clear()
        for worker in workers:
            worker.stop(wait_s=0.5)


SPARES = _Spares()
atexit.register(SPARES.stop_all)


class WorkerSet:
    """The workers of one sandbox: one per calling thread, reused across threads that end."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        self._key = process_key(limits)
        self._lock = threading.Lock()
        self._leases: dict[threading.Thread, WorkerProcess] = {}
        self._idle: list[WorkerProcess] = []

    def for_this_thread(self) -> WorkerProcess:
        me = threading.current_thread()
        with self._lock:
            worker = self._leases.pop(me, None)
            if worker is not None and worker.alive:
                self._leases[me] = worker
                return worker
            worker = None
            for thread in [t for t in self._leases if not t.is_alive()]:
                self._idle.append(self._leases.pop(thread))
            while self._idle and worker is None:
                candidate = self._idle.pop()
                worker = candidate if candidate.alive else None
            if worker is None:
                worker = SPARES.take(self._key)
        if worker is None:
            worker = WorkerProcess(self.limits)  # outside the lock: starting takes a while
        with self._lock:
            self._leases[me] = worker
        return worker

    def current(self) -> WorkerProcess | None:
        """This thread's worker, if it has a live one."""
        with self._lock:
            worker = self._leases.get(threading.current_thread())
        return worker if worker is not None and worker.alive else None

    @property
    def open_connections(self) -> int:
        with self._lock:
            workers = [*self._leases.values(), *self._idle]
        return sum(len(w.engines) for w in workers if w.alive)

    @property
    def workers(self) -> list[WorkerProcess]:
        with self._lock:
            return [w for w in (*self._leases.values(), *self._idle) if w.alive]

    def close(self) -> None:
        """Hand every worker back to the process-wide spares (their databases closed)."""
        with self._lock:
            workers = [*self._leases.values(), *self._idle]
            self._leases.clear()
            self._idle.clear()
        for worker in workers:
            SPARES.give(worker)
