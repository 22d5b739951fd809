"""Start, watch and stop one local llama.cpp server process.

    LocalServer(model_path, LocalServerConfig(...)).start()
      ──► python -m models.local.serve … --port <free port>   (log: <tmp>/server.log)
      ──► poll GET /v1/models until ready ──► base_url "http://127.0.0.1:<port>/v1"

``shared_server`` hands out one running server per (model, config) per process and stops it
when the last user releases it (or at exit), so tests and CLI runs share a model without Ray.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, Self

import httpx
from pydantic import Field

from models.errors import ModelUnavailable
from pipelines.contracts import Frozen

Runtime = Literal["xllamacpp", "llama-cpp-python"]


class LocalServerConfig(Frozen):
    runtime: Runtime = "xllamacpp"
    n_parallel: int = Field(default=4, ge=1)  # slots decoded together (continuous batching)
    ctx_per_slot: int = Field(default=8192, ge=256)
    threads: int = Field(default=2, ge=1)
    # llama.cpp worker threads busy-poll this much (0-100) between graph steps before sleeping.
    # Polling wins on an idle machine and collapses when cores are shared (docs/models.md).
    poll: int = Field(default=0, ge=0, le=100)
    n_batch: int = Field(default=512, ge=32)
    # OMP_WAIT_POLICY of the server process (both runtimes use OpenMP). Spinning idle threads
    # starve each other when cores are shared; null leaves the environment's (OpenMP's default
    # when unset). Compared with poll and n_batch by `benchmarks/bench_models.py --settings`.
    omp_wait_policy: Literal["passive", "active"] | None = "passive"
    startup_timeout_s: float = Field(default=180.0, gt=0)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """One server process; ``alias`` is the model id it answers to."""

    def __init__(
        self, model_path: Path | str, config: LocalServerConfig, *, alias: str = "local"
    ) -> None:
        self.model_path = Path(model_path)
        self.config = config
        self.alias = alias
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_dir = tempfile.TemporaryDirectory(prefix="scale-analytics-llm-")
        self.log_path = Path(self._log_dir.name) / "server.log"

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise ModelUnavailable("the local model server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        if self._proc is not None and self._proc.poll() is None:
            return self.base_url
        if not self.model_path.is_file():
            raise ModelUnavailable(f"model file {self.model_path} does not exist")
        self.port = _free_port()
        cfg = self.config
        cmd = [
            sys.executable,
            "-m",
            "models.local.serve",
            "--runtime",
            cfg.runtime,
            "--model",
            str(self.model_path),
            "--alias",
            self.alias,
            "--port",
            str(self.port),
            "--n-parallel",
            str(cfg.n_parallel),
            "--ctx-per-slot",
            str(cfg.ctx_per_slot),
            "--threads",
            str(cfg.threads),
            "--poll",
            str(cfg.poll),
            "--n-batch",
            str(cfg.n_batch),
        ]
        env = self.child_env()
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
            )
        self._wait_ready()
        return self.base_url

    def child_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The server's environment: ``base`` (default: this process's) with the configured
        OpenMP wait policy, which wins over an inherited one."""
        env = dict(os.environ if base is None else base)
        if self.config.omp_wait_policy is not None:
            env["OMP_WAIT_POLICY"] = self.config.omp_wait_policy.upper()
        return env

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.config.startup_timeout_s
        url = self.base_url + "/models"
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise ModelUnavailable(
                    f"the {self.config.runtime} server for {self.model_path.name} exited with code "
                    f"{self._proc.returncode} while starting:\n{self.log_tail()}"
                )
            try:
                if httpx.get(url, timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise ModelUnavailable(
            f"the {self.config.runtime} server for {self.model_path.name} was not ready after "
            f"{self.config.startup_timeout_s:g} s:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "<no server log>"

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self, timeout_s: float = 10.0) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_shared: dict[tuple[str, str, LocalServerConfig], tuple[LocalServer, int]] = {}
_shared_lock = threading.Lock()


def shared_server(
    model_path: Path, config: LocalServerConfig, *, alias: str
) -> tuple[LocalServer, Callable[[], None]]:
    """A started server shared within this process, and the function that releases it."""
    key = (str(model_path.resolve()), alias, config)
    with _shared_lock:
        server, users = _shared.get(key, (None, 0))
        if server is None or not server.alive():
            server = LocalServer(model_path, config, alias=alias)
            server.start()
            users = 0
        _shared[key] = (server, users + 1)
    released = threading.Event()

    def release() -> None:
        if released.is_set():
            return
        released.set()
        with _shared_lock:
            current, count = _shared.get(key, (None, 0))
            if current is not server:
                return
            if count <= 1:
                del _shared[key]
                server.stop()
            else:
                _shared[key] = (server, count - 1)

    return server, release


@atexit.register
def _stop_all() -> None:
    with _shared_lock:
        for server, _ in _shared.values():
            server.stop()
        _shared.clear()
