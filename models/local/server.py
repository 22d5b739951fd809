"""Start, watch and stop one local llama.cpp server process.

    LocalServer(model_path, LocalServerSettings(...)).start()
      ──► python -m models.local.serve … --port <free port>   (log: <tmp>/server.log)
      ──► poll GET /v1/models until ready ──► base_url "http://127.0.0.1:<port>/v1"

Each start generates a random API key, handed to the child in its environment (never on its
command line, which every local user can read); the server refuses requests without
``Authorization: Bearer <api_key>``, so other processes on the machine cannot use the model.

``shared_server`` hands out one running server per (model, config) per process and stops it
when the last user releases it (or at exit), so tests and CLI runs share a model without Ray.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, Self

import httpx
from pydantic import Field

from core.types import Frozen
from models.errors import ModelUnavailable
from models.local.native import set_aside, usable_binary

log = logging.getLogger(__name__)


class ServerDied(ModelUnavailable):
    """The server process exited while starting; ``reason`` says how (``exit code -11``)."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


# How LocalServer hands the key to its child (models/local/serve.py), never on the command line.
API_KEY_ENV = "SCALE_ANALYTICS_LLM_API_KEY"

# auto: llama-server when a native build for this CPU is at server_binary, else xllamacpp.
Runtime = Literal["auto", "llama-server", "xllamacpp", "llama-cpp-python"]


class LocalServerSettings(Frozen):
    runtime: Runtime = "auto"
    # llama.cpp's server binary for runtime llama-server (and auto): `scale-analytics models
    # build-runtime` builds it for this CPU (models/local/native.py); unset, the model config's
    # runtimes_dir is searched.
    server_binary: str | None = None
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
    # llama.cpp's --cache-reuse: a prompt chunk of at least this many tokens found elsewhere in
    # the slot's cache is shifted into place instead of evaluated again (0: only the common
    # prefix is reused). Focused schemas share table blocks at different offsets.
    cache_reuse: int = Field(default=0, ge=0)
    # llama.cpp's --kv-unified: one KV buffer for all slots; idle slots' prompts are saved to the
    # host-memory prompt cache (--cache-ram) and cleared when another request starts. It does not
    # change when the server restores an earlier prompt (only when the slot it picks would keep
    # less than half of its own): no gain on the claims demo (docs/models.md).
    kv_unified: bool = False
    startup_timeout_s: float = Field(default=180.0, gt=0)

    def resolved(self) -> LocalServerSettings:
        """These settings with ``auto`` decided: the native binary when it is usable here."""
        if self.runtime != "auto":
            return self
        native = usable_binary(self.server_binary) is not None
        return self.model_copy(update={"runtime": "llama-server" if native else "xllamacpp"})


class LocalEndpoint(Frozen):
    """Where a started server listens and the key it takes (``Authorization: Bearer``)."""

    base_url: str
    api_key: str = Field(repr=False)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """One server process; ``alias`` is the model id it answers to."""

    def __init__(
        self, model_path: Path | str, config: LocalServerSettings, *, alias: str = "local"
    ) -> None:
        self.model_path = Path(model_path)
        self.config = config.resolved()
        # auto chose the native build: a build that dies while starting falls back to the wheel
        self._fallback = config.runtime == "auto" and self.config.runtime == "llama-server"
        self.alias = alias
        self.port: int | None = None
        self.api_key: str | None = None  # generated by each start
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_dir = tempfile.TemporaryDirectory(prefix="scale-analytics-llm-")
        self.log_path = Path(self._log_dir.name) / "server.log"

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise ModelUnavailable("the local model server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def endpoint(self) -> LocalEndpoint:
        if self.api_key is None:
            raise ModelUnavailable("the local model server is not started")
        return LocalEndpoint(base_url=self.base_url, api_key=self.api_key)

    @property
    def auth_headers(self) -> dict[str, str]:
        if self.api_key is None:
            raise ModelUnavailable("the local model server is not started")
        return {"Authorization": f"Bearer {self.api_key}"}

    def start(self) -> str:
        if self._proc is not None and self._proc.poll() is None:
            return self.base_url
        try:
            return self._start()
        except ServerDied as exc:
            if not self._fallback:
                raise
            set_aside(self.config.server_binary, str(exc))
            log.warning(
                "the native llama-server died while starting (%s): set aside for this CPU "
                "(%s); serving with the xllamacpp wheel",
                exc.reason,
                self.config.server_binary,
            )
            self.config = self.config.model_copy(update={"runtime": "xllamacpp"})
            self._fallback = False
            return self._start()

    def _start(self) -> str:
        if not self.model_path.is_file():
            raise ModelUnavailable(f"model file {self.model_path} does not exist")
        cfg = self.config
        if cfg.runtime == "llama-server" and usable_binary(cfg.server_binary) is None:
            raise ModelUnavailable(
                f"no llama-server built for this CPU at {cfg.server_binary}: run "
                "`scale-analytics models build-runtime` (or use runtime xllamacpp)"
            )
        self.port = free_port()
        self.api_key = secrets.token_urlsafe(32)
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
            "--cache-reuse",
            str(cfg.cache_reuse),
            *(["--kv-unified"] if cfg.kv_unified else []),
        ]
        if cfg.runtime == "llama-server":
            cmd += ["--server-binary", str(cfg.server_binary)]
        env = self.child_env()
        env[API_KEY_ENV] = self.api_key
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
                raise ServerDied(
                    f"the {self.config.runtime} server for {self.model_path.name} exited with code "
                    f"{self._proc.returncode} while starting:\n{self.log_tail()}",
                    reason=f"exit code {self._proc.returncode}",
                )
            try:
                if httpx.get(url, headers=self.auth_headers, timeout=2.0).status_code == 200:
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

    def stop(self, timeout_s: float = 3.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout_s``: a server keeps nothing worth waiting for."""
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


@contextmanager
def announced(alias: str, config: LocalServerSettings) -> Iterator[None]:
    """Say on stderr that a model server is starting and, once it answers, after how long: the
    model loads for seconds to a minute, by its size and the machine."""
    print(
        f"model {alias}: starting its server "
        f"({config.runtime}, {config.n_parallel} slots, {config.threads} threads) …",
        file=sys.stderr,
        flush=True,
    )
    started = time.monotonic()
    yield
    print(
        f"model {alias}: ready after {time.monotonic() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )


_shared: dict[tuple[str, str, LocalServerSettings], tuple[LocalServer, int]] = {}
_shared_lock = threading.Lock()


def shared_server(
    model_path: Path, config: LocalServerSettings, *, alias: str
) -> tuple[LocalServer, Callable[[], None]]:
    """A started server shared within this process, and the function that releases it."""
    key = (str(model_path.resolve()), alias, config)
    with _shared_lock:
        server, users = _shared.get(key, (None, 0))
        if server is None or not server.alive():
            server = LocalServer(model_path, config, alias=alias)
            with announced(alias, server.config):
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
