"""shared_model_servers: one client (and so one server start) per distinct model config."""

from __future__ import annotations

from omegaconf import OmegaConf

import models
from eval.sweep.services import shared_model_servers


class _Client:
    def __init__(self, log: list[str], name: str) -> None:
        self._log, self._name = log, name

    def close(self) -> None:
        self._log.append(f"close {self._name}")


def test_each_distinct_model_config_is_started_once_and_closed_after(monkeypatch) -> None:
    log: list[str] = []

    def build(model_cfg) -> _Client:
        log.append(f"start {model_cfg.default.model}")
        return _Client(log, model_cfg.default.model)

    monkeypatch.setattr(models, "build_client", build)
    small = {"default": {"backend": "local", "model": "qwen2.5-coder-0.5b"}}
    large = {"default": {"backend": "local", "model": "qwen2.5-coder-1.5b"}}
    cfgs = [
        OmegaConf.create({"model": m, "scaling": {"k": i}})
        for i, m in enumerate([small, small, large])
    ]
    with shared_model_servers(cfgs) as started:
        assert started == 2
        assert log == ["start qwen2.5-coder-0.5b", "start qwen2.5-coder-1.5b"]
    assert log[2:] == ["close qwen2.5-coder-1.5b", "close qwen2.5-coder-0.5b"]


def test_servers_are_closed_when_a_run_fails(monkeypatch) -> None:
    closed: list[str] = []
    monkeypatch.setattr(models, "build_client", lambda cfg: _Client(closed, "m"))
    cfg = OmegaConf.create({"model": {"default": {"backend": "local", "model": "m"}}})
    try:
        with shared_model_servers([cfg]):
            raise RuntimeError("sweep failed")
    except RuntimeError:
        pass
    assert closed == ["close m"]
