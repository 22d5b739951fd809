"""Build a :class:`ModelClient` from the Hydra ``model`` config.

    build_client(load_config(["model=qwen2.5-coder-0.5b"]).model)
      local slot      ──► ModelStore.resolve(model) ──► shared server: LocalModelServer Ray actor when
                          Ray is initialised (placement auto|ray), else a child process of this one
                          ──► OpenAICompatBackend(flavor="llama.cpp", the server's per-start API key)
      openai slot     ──► OpenAICompatBackend(base_url, api key from env)
      vllm_serve slot ──► OpenAICompatBackend(flavor="vllm") to the deployed Ray Serve LLM app
      replay slot     ──► ReplayBackend(cassette[, the record_with backend when recording])
      response_cache  ──► every slot's backend behind one CachedBackend file (ablations)

Servers started here are stopped by ``client.close()`` / ``await client.aclose()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from pydantic import SecretStr

from core.config import section
from models.backends.base import ChatBackend
from models.backends.openai_compat import OpenAICompatBackend, OpenAICompatSettings
from models.backends.replay import (
    Cassette,
    ReplayBackend,
    fill_missing_from_env,
    record_mode_from_env,
)
from models.backends.response_cache import CachedBackend, ResponseCache
from models.client import ModelClient, Slot
from models.config import LocalSlot, ModelSettings, OpenAISlot, ReplaySlot, VLLMServeSlot
from models.local import native
from models.local.server import LocalServerSettings, shared_server
from models.registry import REGISTRY
from models.store import ModelStore

Closer = Callable[[], None]


def _local_backend(slot: LocalSlot, config: ModelSettings, closers: list[Closer]) -> ChatBackend:
    path = ModelStore(config.models_path).resolve(slot.model)
    alias = slot.model if slot.model in REGISTRY else path.stem
    server_config = LocalServerSettings(
        **slot.model_dump(include=set(LocalServerSettings.model_fields))
    )
    if server_config.server_binary is None and config.runtimes_dir is not None:
        binary = str(native.default_binary(config.runtimes_dir))
        server_config = server_config.model_copy(update={"server_binary": binary})
    server_config = server_config.resolved()
    placement = slot.placement
    if placement == "auto":
        import ray

        placement = "ray" if ray.is_initialized() else "process"
    if placement == "ray":
        from models.local.actor import attach_or_start

        endpoint, close = attach_or_start(
            path, server_config, alias=alias, num_cpus=slot.ray_num_cpus
        )
    else:
        server, close = shared_server(path, server_config, alias=alias)
        endpoint = server.endpoint
    closers.append(close)
    return OpenAICompatBackend(
        OpenAICompatSettings(
            base_url=endpoint.base_url,
            api_key=SecretStr(endpoint.api_key),
            model=alias,
            flavor="llama.cpp",
            max_connections=4 * slot.n_parallel,
            max_n=slot.n_parallel,
        )
    )


def _backend(slot: Any, config: ModelSettings, closers: list[Closer]) -> ChatBackend:
    if isinstance(slot, LocalSlot):
        return _local_backend(slot, config, closers)
    if isinstance(slot, OpenAISlot | VLLMServeSlot):
        # A vLLM deployment is an OpenAI-compatible server of the vLLM flavor.
        served = (
            {"flavor": "vllm"}
            if isinstance(slot, VLLMServeSlot)
            else {"flavor": slot.flavor, "max_connections": slot.max_connections}
        )
        return OpenAICompatBackend(
            OpenAICompatSettings(
                base_url=slot.base_url, model=slot.model, api_key_env=slot.api_key_env, **served
            )
        )
    if isinstance(slot, ReplaySlot):
        record = record_mode_from_env() if slot.record is None else slot.record
        fill_missing = not record and fill_missing_from_env()
        if (record or fill_missing) and slot.record_with is None:
            raise ValueError(
                f"replay slot for {slot.model} has no record_with backend to record from"
            )
        # A recording server lives until the process exits (atexit), not per client, so a
        # `make cassettes` run loads the model once instead of once per test.
        inner = _backend(slot.record_with, config, []) if record or fill_missing else None
        return ReplayBackend(
            Cassette(slot.cassette),
            model=slot.model,
            inner=inner,
            record=record,
            fill_missing=fill_missing,
        )
    raise TypeError(f"unsupported slot type {type(slot).__name__}")


def _cached(backend: ChatBackend, cache: ResponseCache | None, replay_latency: bool) -> ChatBackend:
    if cache is None:
        return backend
    return CachedBackend(backend, cache, replay_latency=replay_latency)


def build_client(cfg: DictConfig | Mapping[str, Any] | ModelSettings) -> ModelClient:
    """A ready client for the ``model`` config group (starting or attaching local servers)."""
    config = cfg if isinstance(cfg, ModelSettings) else section(cfg, "", ModelSettings)
    closers: list[Closer] = []
    cache = ResponseCache(config.response_cache) if config.response_cache else None
    try:
        slots = {
            name: Slot(
                name=name,
                backend=_cached(_backend(slot, config, closers), cache, config.replay_latency),
                price=slot.price,
                timeout_s=slot.timeout_s,
            )
            for name, slot in config.slots.items()
        }
        return ModelClient(slots, config.roles, config.retry, on_close=closers)
    except BaseException:
        for close in reversed(closers):
            close()
        raise


def replay_client(cassette: Path | str, *, record: bool | None = None) -> ModelClient:
    """The ``model=replay`` client reading/writing ``cassette`` (tests' one-liner).

    Recording (``SCALE_ANALYTICS_RECORD=1`` or ``record=True``) uses the real 0.5B model.
    """
    from core.config import load_config

    overrides = ["model=replay", f"model.slots.default.cassette={Path(cassette).resolve()}"]
    if record is not None:
        overrides.append(f"model.slots.default.record={str(record).lower()}")
    return build_client(load_config(overrides).model)
