"""GPU slots online: one Ray Serve LLM (vLLM) deployment per ``vllm_serve`` slot.

A thin translation of our config into Ray's own integration, nothing more:

    conf/model/qwen2.5-coder-32b.yaml  slots.<name> (backend: vllm_serve)
      ──llm_config_kwargs──►  LLMConfig(model_loading_config, deployment_config, engine_kwargs, …)
      ──build_app──►  build_openai_app({"llm_configs": [...]})  ──deployed()──►  /v1/chat/completions
    ModelClient ──OpenAICompatBackend(flavor="vllm")──► that ingress (see models.build)

Each model's deployment is named after a fingerprint of its settings
(``LLMServer:qwen2_5-coder-32b-<sha>``), so the names a running app reports say which config it
was deployed with (:mod:`models.backends.vllm_deploy` compares them before attaching).

``ray.serve.llm`` needs vLLM (``pip install -e '.[gpu]'``); it is imported only inside
:func:`build_app`, so CPU installs import this module freely.

    python -m models.backends.vllm_serve model=qwen2.5-coder-32b    # deploy and keep serving
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from models.config import ModelSettings, VLLMServeSlot

if TYPE_CHECKING:
    from ray.serve import Application

APP_NAME = "scale-analytics-llm"
# Ray Serve LLM names each model's deployment "LLMServer:" + deployment_config["name"]
# (ray.llm's build_llm_deployment); the ingress deployment has another name.
LLM_SERVER_PREFIX = "LLMServer:"


def llm_config_kwargs(slot: VLLMServeSlot) -> dict[str, Any]:
    """Keyword arguments of ``ray.serve.llm.LLMConfig`` for one slot."""
    if slot.max_replicas is not None and slot.max_replicas < slot.num_replicas:
        raise ValueError(
            f"max_replicas ({slot.max_replicas}) < num_replicas ({slot.num_replicas}) for {slot.model}"
        )
    if slot.max_replicas is None:
        deployment: dict[str, Any] = {"num_replicas": slot.num_replicas}
    else:
        deployment = {
            "autoscaling_config": {
                "min_replicas": slot.num_replicas,
                "max_replicas": slot.max_replicas,
            }
        }
    kwargs: dict[str, Any] = {
        "model_loading_config": {"model_id": slot.model, "model_source": slot.model_source},
        "deployment_config": deployment,
        "engine_kwargs": {
            "tensor_parallel_size": slot.tensor_parallel_size,
            "max_model_len": slot.max_model_len,
            "enable_prefix_caching": True,  # a question's candidates share the schema prompt
            **slot.engine_kwargs,
        },
    }
    if slot.accelerator_type is not None:
        kwargs["accelerator_type"] = slot.accelerator_type
    fingerprint = hashlib.sha256(json.dumps(kwargs, sort_keys=True, default=str).encode())
    # Ray's own deployment name for a model id, plus what was deployed.
    safe_id = slot.model.replace("/", "--").replace(".", "_")
    deployment["name"] = f"{safe_id}-{fingerprint.hexdigest()[:10]}"
    return kwargs


def has_serve_slots(config: ModelSettings) -> bool:
    return any(isinstance(slot, VLLMServeSlot) for slot in config.slots.values())


def serve_slots(config: ModelSettings) -> dict[str, VLLMServeSlot]:
    """The distinct vllm_serve slots of a config, one deployment per served model id."""
    slots: dict[str, VLLMServeSlot] = {}
    for slot in config.slots.values():
        if isinstance(slot, VLLMServeSlot):
            if slot.model in slots and slots[slot.model] != slot:
                raise ValueError(
                    f"two vllm_serve slots serve {slot.model!r} with different settings"
                )
            slots[slot.model] = slot
    if not slots:
        raise ValueError(f"model config {config.name!r} has no vllm_serve slot")
    return slots


def deployment_names(config: ModelSettings) -> tuple[str, ...]:
    """The model deployments the Serve app of ``config`` runs, as ``serve.status()`` names them."""
    return tuple(
        sorted(
            LLM_SERVER_PREFIX + llm_config_kwargs(slot)["deployment_config"]["name"]
            for slot in serve_slots(config).values()
        )
    )


def build_app(config: ModelSettings) -> Application:
    from ray.serve.llm import LLMConfig, build_openai_app

    llm_configs = [LLMConfig(**llm_config_kwargs(slot)) for slot in serve_slots(config).values()]
    return build_openai_app({"llm_configs": llm_configs})


def main(argv: list[str] | None = None) -> int:
    from core.config import load_config, section
    from models.backends.vllm_deploy import deployed  # it builds on this module

    cfg = load_config(sys.argv[1:] if argv is None else argv)
    model = section(cfg, "model", ModelSettings)
    names = deployment_names(model)  # refuses a config without vllm_serve slots
    with deployed(model):
        print(f"{APP_NAME} serving {', '.join(names)}; Ctrl-C stops", flush=True)
        try:
            while True:
                time.sleep(60)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
