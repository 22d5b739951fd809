"""Typed form of the Hydra ``model`` config group (``conf/model/<name>.yaml``).

    model:
      name: qwen2.5-coder-1.5b
      models_dir: ${paths.models}
      runtimes_dir: ${paths.runtimes}      # where `models build-runtime` puts llama-server
      roles: {generator: default, selector: default, critic: cheap, ...}
      slots:
        default: {backend: local, model: qwen2.5-coder-1.5b, n_parallel: 4, price: {...}}
        cheap:   {backend: local, model: qwen2.5-coder-0.5b}

Each slot's ``backend`` picks its schema: ``local`` (llama.cpp on the CPU), ``openai`` (any
OpenAI-compatible server), ``vllm_serve`` (a Ray Serve LLM deployment on GPUs), ``replay``
(cassettes for tests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from core.types import Frozen
from models.backends.openai_compat import Flavor
from models.budget import Price
from models.client import ROLES, RetryPolicy
from models.local.server import LocalServerSettings


class _SlotBase(Frozen):
    model: str  # registry name, GGUF path, or served model id
    timeout_s: float = Field(default=300.0, gt=0)
    price: Price = Price()


class LocalSlot(_SlotBase, LocalServerSettings):
    backend: Literal["local"]
    # auto: the shared LocalModelServer Ray actor when Ray is initialised, else a child process.
    placement: Literal["auto", "ray", "process"] = "auto"
    ray_num_cpus: float = Field(default=0.5, ge=0)


class OpenAISlot(_SlotBase):
    backend: Literal["openai"]
    base_url: str
    api_key_env: str | None = None
    flavor: Flavor = "openai"
    max_connections: int = Field(default=64, ge=1)


class VLLMServeSlot(_SlotBase):
    """One Ray Serve LLM deployment (vLLM); see :mod:`models.backends.vllm_serve`."""

    backend: Literal["vllm_serve"]
    model_source: str  # hub id or a path/bucket the GPU nodes can read
    base_url: str = "http://127.0.0.1:8000/v1"  # the Serve app's OpenAI ingress
    api_key_env: str | None = None
    num_replicas: int = Field(default=1, ge=1)
    max_replicas: int | None = None  # set to autoscale between num_replicas and this
    tensor_parallel_size: int = Field(default=1, ge=1)
    accelerator_type: str | None = None
    max_model_len: int = Field(default=16384, ge=256)
    engine_kwargs: dict[str, Any] = Field(default_factory=dict)


class ReplaySlot(_SlotBase):
    backend: Literal["replay"]
    cassette: str
    record: bool | None = None  # None: follow SCALE_ANALYTICS_RECORD
    record_with: LocalSlot | OpenAISlot | None = None  # the real model used when recording


SlotSettings = Annotated[
    LocalSlot | OpenAISlot | VLLMServeSlot | ReplaySlot, Field(discriminator="backend")
]


class ModelSettings(Frozen):
    name: str
    models_dir: str = ".cache/models"
    # llama.cpp's server built for this CPU (models/local/native.py); a local slot whose
    # server_binary is unset uses the one here.
    runtimes_dir: str | None = None
    roles: dict[str, str] = Field(default_factory=lambda: {role: "default" for role in ROLES})
    slots: dict[str, SlotSettings]
    retry: RetryPolicy = RetryPolicy()
    # JSONL file shared by an experiment's runs: identical requests are computed once
    # (models/backends/response_cache.py). null: every request goes to the model.
    response_cache: str | None = None
    # A cached reply comes back after the seconds it took when it was computed, so a pipeline
    # with a time budget (scaling.escalate_within_s) decides in a rerun as it did live; false:
    # at once (an ablation's cached calls cost no time).
    replay_latency: bool = False
    # How long eval and serve wait for the Ray Serve LLM app of the vllm_serve slots to be ready
    # (models/backends/vllm_deploy.py); a first deploy downloads the weights (~65 GB for a 32B).
    deploy_timeout_s: float = Field(default=1800.0, gt=0)

    @property
    def models_path(self) -> Path:
        return Path(self.models_dir)
