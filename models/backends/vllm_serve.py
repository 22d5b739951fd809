"""GPU slots online: one Ray Serve LLM (vLLM) deployment per ``vllm_serve`` slot.

A thin translation of our config into Ray's own integration, nothing more:

    conf/model/qwen2.5-coder-32b.yaml  slots.<name> (backend: vllm_serve)
      ──llm_config_kwargs──►  LLMConfig(model_loading_config, deployment_config, engine_kwargs, …)
      ──build_app──►  build_openai_app({"llm_configs": [...]})  ──serve.run──►  /v1/chat/completions
    ModelClient ──OpenAICompatBackend(flavor="vllm")──► that ingress (see models.build)

``ray.serve.llm`` needs vLLM (``pip install -e '.[gpu]'``); it is imported only inside
:func:`build_app`, so CPU installs import this module freely.

    python -m models.backends.vllm_serve model=qwen2.5-coder-32b    # deploy and keep serving
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from models.config import ModelSettings, VLLMServeSlot

if TYPE_CHECKING:
    from ray.serve import Application

APP_NAME = "scale-analytics-llm"


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
    return kwargs


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


def build_app(config: ModelSettings) -> Application:
    from ray.serve.llm import LLMConfig, build_openai_app

    llm_configs = [LLMConfig(**llm_config_kwargs(slot)) for slot in serve_slots(config).values()]
    return build_openai_app({"llm_configs": llm_configs})


def deploy(config: ModelSettings, *, blocking: bool = False) -> None:
    from ray import serve

    serve.run(build_app(config), name=APP_NAME, route_prefix="/", blocking=blocking)


def main(argv: list[str] | None = None) -> int:
    from core.config import load_config, section

    cfg = load_config(sys.argv[1:] if argv is None else argv)
    deploy(section(cfg, "model", ModelSettings), blocking=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
