"""The local llama.cpp server takes a key generated at each start; requests without it are refused."""

from __future__ import annotations

import subprocess

import httpx
import pytest
from pydantic import SecretStr

from models.local import serve
from models.local.server import LocalEndpoint, LocalServer, LocalServerSettings


class _Started:
    """Stands in for the server process: records how it was started."""

    def __init__(self, cmd, **kwargs) -> None:
        self.cmd, self.env = cmd, kwargs["env"]

    def poll(self) -> None:
        return None


def test_each_start_generates_a_key_passed_in_the_environment_not_the_command_line(
    tmp_path, monkeypatch
):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    started: list[_Started] = []
    monkeypatch.setattr(
        subprocess, "Popen", lambda cmd, **kw: started.append(_Started(cmd, **kw)) or started[-1]
    )
    monkeypatch.setattr(LocalServer, "_wait_ready", lambda self: None)
    server = LocalServer(model, LocalServerSettings())
    keys = []
    for _ in range(2):
        server._proc = None  # a stopped server starts again
        server.start()
        keys.append(server.api_key)
        assert started[-1].env[serve.API_KEY_ENV] == server.api_key
        assert not any(
            server.api_key in part for part in started[-1].cmd
        )  # `ps` shows the command line
        assert server.endpoint == LocalEndpoint(base_url=server.base_url, api_key=server.api_key)
        assert server.api_key not in repr(server.endpoint)
    assert keys[0] != keys[1] and all(len(k) >= 32 for k in keys)


def test_the_child_takes_the_key_out_of_its_environment_and_refuses_to_run_without(monkeypatch):
    monkeypatch.setenv(serve.API_KEY_ENV, "k-123")
    assert serve._take_api_key() == "k-123"
    assert serve.API_KEY_ENV not in __import__("os").environ  # not inherited any further
    with pytest.raises(SystemExit, match="not set"):
        serve._take_api_key()


def test_the_client_of_a_local_slot_sends_the_servers_key(monkeypatch, tmp_path):
    import models.build as build
    from models.config import ModelSettings

    class FakeServer:
        endpoint = LocalEndpoint(base_url="http://127.0.0.1:9/v1", api_key="per-start-key")

    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(build, "shared_server", lambda *a, **kw: (FakeServer(), lambda: None))
    config = ModelSettings.model_validate(
        {
            "name": "m",
            "models_dir": str(tmp_path),
            "slots": {"default": {"backend": "local", "model": str(model), "placement": "process"}},
        }
    )
    backend = build._local_backend(config.slots["default"], config, [])
    assert backend._headers["Authorization"] == "Bearer per-start-key"
    assert backend.config.api_key == SecretStr("per-start-key")


@pytest.mark.real_model
def test_a_request_without_the_key_is_refused(server_05b) -> None:
    base = server_05b.base_url
    body = {
        "model": "qwen2.5-coder-0.5b",
        "messages": [{"role": "user", "content": "Say 1"}],
        "max_tokens": 2,
    }
    tokenize = base.removesuffix("/v1") + "/tokenize"
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        assert (
            httpx.post(
                base + "/chat/completions", json=body, headers=headers, timeout=60
            ).status_code
            == 401
        )
        assert (
            httpx.post(tokenize, json={"content": "x"}, headers=headers, timeout=60).status_code
            == 401
        )
    assert httpx.get(base + "/models", timeout=10).status_code == 401
    good = server_05b.auth_headers
    assert httpx.get(base + "/models", headers=good, timeout=10).status_code == 200
    assert (
        httpx.post(base + "/chat/completions", json=body, headers=good, timeout=120).status_code
        == 200
    )
    assert httpx.post(tokenize, json={"content": "x"}, headers=good, timeout=60).status_code == 200
