"""``serve.process``: a server that cannot start is reported with its own words, not a hang."""

from __future__ import annotations

import os
import socket

import pytest

from serve.process import ServeNotReady, ServeProcess, free_port
from tests.serve.conftest import REPO


def test_free_port_is_bindable_on_loopback():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_a_server_that_exits_raises_with_its_log_and_stop_returns_its_code(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = ServeProcess(
            [],
            log=tmp_path / "serve.log",
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
            cwd=REPO,
            port=taken.getsockname()[1],
        )
        with pytest.raises(ServeNotReady, match="already in use") as raised:
            server.wait_ready(timeout_s=120)
    assert "serve exited 2" in str(raised.value)
    assert server.stop() == 2
