"""shared_model_servers: one client (and so one server start) per distinct model config."""

from __future__ import annotations

import models
from eval.sweep.services import shared_model_servers
from models.config import ModelSettings


def settings(model: str) -> ModelSettings:
    return ModelSettings(name=model, slots={"default": {"backend": "local", "model": model}})


class _Client:
    def __init__(self, log: list[str], name: str) -> None:
        self._log, self._name = log, name

    def close(self) -> None:
        self._log.append(f"close {self._name}")


def test_each_distinct_model_config_is_started_once_and_closed_after(monkeypatch) -> None:
    log: list[str] = []

    def build(model: ModelSettings) -> _Client:
        log.append(f"start {model.slots['default'].model}")
        return _Client(log, model.slots["default"].model)

    monkeypatch.setattr(models, "build_client", build)
    small, large = settings("qwen2.5-coder-0.5b"), settings("qwen2.5-coder-1.5b")
    with shared_model_servers([small, small, large]) as started:
        assert started == 2
        assert log == ["start qwen2.5-coder-0.5b", "start qwen2.5-coder-1.5b"]
    assert log[2:] == ["close qwen2.5-coder-1.5b", "close qwen2.5-coder-0.5b"]


def test_servers_are_closed_when_a_run_fails(monkeypatch) -> None:
    closed: list[str] = []
    monkeypatch.setattr(models, "build_client", lambda model: _Client(closed, "m"))
    try:
        with shared_model_servers([settings("m")]):
            raise RuntimeError("sweep failed")
    except RuntimeError:
        pass
    assert closed == ["close m"]
