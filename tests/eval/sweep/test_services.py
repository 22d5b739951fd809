"""shared_model_servers: one client (and so one server start) per distinct model config, and the
GPU slots' Serve LLM app deployed once when every configuration needs the same one."""

from __future__ import annotations

from contextlib import contextmanager

import models
from eval.sweep import services
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


def gpu_settings(model: str, max_model_len: int = 16384) -> ModelSettings:
    slot = {
        "backend": "vllm_serve",
        "model": model,
        "model_source": f"org/{model}",
        "max_model_len": max_model_len,
    }
    return ModelSettings(name=model, slots={"default": slot})


def _recording_deploys(monkeypatch, log: list[str]) -> None:
    @contextmanager
    def deployed(model: ModelSettings):
        log.append(f"deploy {model.name}")
        yield
        log.append(f"delete {model.name}")

    monkeypatch.setattr(services, "deployed", deployed)
    monkeypatch.setattr(models, "build_client", lambda model: _Client(log, model.name))


def test_one_gpu_app_for_every_configuration_is_deployed_once_around_them(monkeypatch) -> None:
    log: list[str] = []
    _recording_deploys(monkeypatch, log)
    gpu = gpu_settings("g")
    cached = gpu.model_copy(update={"response_cache": "cache.jsonl"})  # same app, other client
    with shared_model_servers([gpu, cached, settings("cpu")]) as started:
        assert started == 3 and log == ["deploy g"]
    assert log[-1] == "delete g"


def test_configurations_needing_different_gpu_apps_deploy_each_in_turn(monkeypatch) -> None:
    log: list[str] = []
    _recording_deploys(monkeypatch, log)
    with shared_model_servers([gpu_settings("g"), gpu_settings("g", max_model_len=32768)]):
        assert not any(line.startswith("deploy") for line in log)  # sweep_services does, per run
