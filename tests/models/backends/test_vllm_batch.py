import pytest

from models.backends.vllm_batch import (
    BatchOptions,
    build_batch_processor,
    processor_config_kwargs,
    sampling_params,
)
from models.config import VLLMServeSlot
from models.types import ChatMessage, ChatRequest

SLOT = VLLMServeSlot(
    backend="vllm_serve",
    model="qwen2.5-coder-32b",
    model_source="Qwen/Qwen2.5-Coder-32B-Instruct",
    tensor_parallel_size=4,
    max_model_len=8192,
)


def _req(**kw) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="user", content="q"),), **kw)


def test_processor_config_kwargs() -> None:
    kwargs = processor_config_kwargs(SLOT, BatchOptions(batch_size=16, concurrency=2))
    assert kwargs["model_source"] == "Qwen/Qwen2.5-Coder-32B-Instruct"
    assert (kwargs["batch_size"], kwargs["concurrency"]) == (16, 2)
    assert kwargs["engine_kwargs"]["tensor_parallel_size"] == 4
    assert kwargs["engine_kwargs"]["max_model_len"] == 8192


def test_sampling_params_carry_request_settings() -> None:
    params = sampling_params(_req(temperature=0.7, top_p=0.9, max_tokens=64, stop=(";",), seed=5))
    assert params == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 64, "stop": [";"], "seed": 5}
    schema = {"type": "object"}
    assert sampling_params(_req(json_schema=schema))["structured_outputs"] == {"json": schema}
    assert sampling_params(_req(grammar='root ::= "a"'))["structured_outputs"] == {
        "grammar": 'root ::= "a"'
    }


def test_processor_refuses_n_above_one() -> None:
    with pytest.raises(ValueError, match="n=1"):
        build_batch_processor(SLOT, _req(n=4))
