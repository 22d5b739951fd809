"""``scale-analytics serve`` as a child process, for integration tests and benchmarks.

Started on a free loopback port (or the one given) in its own session, so Ray and Serve's
processes stay in it; ``wait_ready`` polls ``/readyz``; ``stop`` sends SIGTERM, then kills.

    server = ServeProcess(["serve.databases.concerts=/data/concerts.sqlite"], log=Path("s.log"))
    try:
        server.wait_ready(timeout_s=240)
        httpx.post(f"{server.base}/v1/query", json={"question": "...", "database": "concerts"})
    finally:
        server.stop()   ──► 0 after a clean shutdown
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx

from models.local.server import free_port


class ServeNotReady(RuntimeError):
    """The server exited, or did not answer ``/readyz`` in time; the message ends with its log."""


__all__ = ["ServeNotReady", "ServeProcess", "free_port"]


class ServeProcess:
    def __init__(
        self,
        overrides: Sequence[str],
        *,
        log: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        port: int | None = None,
    ) -> None:
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        argv = [sys.executable, "-m", "core.cli", "serve", f"serve.port={self.port}", *overrides]
        with log.open("w") as out:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=None if env is None else dict(env),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServeNotReady(f"serve exited {self.process.returncode}: {self._log_tail()}")
            try:
                if httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(1)
        raise ServeNotReady(f"serve not ready after {timeout_s:g} s: {self._log_tail()}")

    def stop(self, grace_s: float = 120) -> int:
        """SIGTERM, then a kill after ``grace_s``; the exit code (0: a clean shutdown)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()

    def _log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"
