"""GPU single-pass batch: a Ray Data LLM processor (vLLM) built from a slot's config.

    ray.data.Dataset of rows {"messages": [...], <any other columns>}
      ──preprocess──►  + sampling_params from a ChatRequest template (one row per sample)
      ──vLLM engine stage (vLLMEngineProcessorConfig)──►  generated_text, num_input_tokens, num_generated_tokens
      ──postprocess──►  {"text", "prompt_tokens", "completion_tokens", <original columns>}

``ray.data.llm`` needs vLLM (``pip install -e '.[gpu]'``); it is imported only inside
:func:`build_batch_processor`.

    processor = build_batch_processor(slot, ChatRequest(messages=(...,), max_tokens=256))
    out = processor(ray.data.from_items(rows)).take_all()   # on a GPU node with vLLM
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.types import Frozen
from models.config import VLLMServeSlot
from models.types import ChatRequest


class BatchOptions(Frozen):
    batch_size: int = Field(default=64, ge=1)
    concurrency: int = Field(default=1, ge=1)  # vLLM engine replicas


DEFAULT_BATCH = BatchOptions()


def processor_config_kwargs(
    slot: VLLMServeSlot, options: BatchOptions = DEFAULT_BATCH
) -> dict[str, Any]:
    """Keyword arguments of ``ray.data.llm.vLLMEngineProcessorConfig`` for one slot."""
    kwargs: dict[str, Any] = {
        "model_source": slot.model_source,
        "batch_size": options.batch_size,
        "concurrency": options.concurrency,
        "engine_kwargs": {
            "tensor_parallel_size": slot.tensor_parallel_size,
            "max_model_len": slot.max_model_len,
            "enable_prefix_caching": True,
            **slot.engine_kwargs,
        },
    }
    if slot.accelerator_type is not None:
        kwargs["accelerator_type"] = slot.accelerator_type
    return kwargs


def sampling_params(request: ChatRequest) -> dict[str, Any]:
    """vLLM sampling parameters of one sample (``n`` is spread over rows, so it is 1 here)."""
    params: dict[str, Any] = {
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_tokens": request.max_tokens,
    }
    if request.stop:
        params["stop"] = list(request.stop)
    if request.seed is not None:
        params["seed"] = request.seed
    if request.json_schema is not None:
        params["structured_outputs"] = {"json": request.json_schema}
    if request.grammar is not None:
        params["structured_outputs"] = {"grammar": request.grammar}
    return params


def build_batch_processor(
    slot: VLLMServeSlot, template: ChatRequest, options: BatchOptions = DEFAULT_BATCH
):
    """A processor mapping rows with ``messages`` to rows with ``text`` and token counts.

    ``template`` supplies the sampling settings; its messages are ignored (rows bring theirs).
    """
    if template.n != 1:
        raise ValueError(
            "build_batch_processor takes n=1; repeat rows (with distinct seeds) for more samples"
        )
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    params = sampling_params(template)

    def preprocess(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "sampling_params": params}

    def postprocess(row: dict[str, Any]) -> dict[str, Any]:
        keep = {
            k: v
            for k, v in row.items()
            if k not in {"generated_text", "num_input_tokens", "num_generated_tokens"}
        }
        return {
            **keep,
            "text": row["generated_text"],
            "prompt_tokens": int(row["num_input_tokens"]),
            "completion_tokens": int(row["num_generated_tokens"]),
        }

    config = vLLMEngineProcessorConfig(**processor_config_kwargs(slot, options))
    return build_processor(config, preprocess=preprocess, postprocess=postprocess)
