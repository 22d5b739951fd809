import subprocess
import sys
import types

import pytest

from core.config import load_config, section
from models.backends.vllm_serve import (
    build_app,
    deployment_names,
    llm_config_kwargs,
    serve_slots,
)
from models.config import ModelSettings, VLLMServeSlot


def _model_config(name: str) -> ModelSettings:
    return section(load_config([f"model={name}"]), "model", ModelSettings)


def test_importing_the_gpu_backends_needs_no_vllm() -> None:
    code = (
        "import sys, models.backends.vllm_serve, models.backends.vllm_deploy, models.build; "
        "bad = sorted(m for m in sys.modules"
        " if m.split('.')[0] == 'vllm' or m.startswith('ray.serve.llm')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_qwen_32b_config_translates_to_llm_config_kwargs() -> None:
    (slot,) = serve_slots(_model_config("qwen2.5-coder-32b")).values()
    kwargs = llm_config_kwargs(slot)
    assert kwargs["model_loading_config"] == {
        "model_id": "qwen2.5-coder-32b",
        "model_source": "Qwen/Qwen2.5-Coder-32B-Instruct",
    }
    assert kwargs["deployment_config"] == {
        "num_replicas": 2,
        "name": "qwen2_5-coder-32b-bdbba59c04",
    }
    assert kwargs["engine_kwargs"]["tensor_parallel_size"] == 2
    assert kwargs["engine_kwargs"]["enable_prefix_caching"] is True
    assert "accelerator_type" not in kwargs


def test_omnisql_config_has_one_deployment_per_model_and_autoscales_the_generator() -> None:
    config = _model_config("omnisql-32b")
    slots = serve_slots(config)
    assert sorted(slots) == ["omnisql-32b", "qwen2.5-coder-32b"]
    generator = llm_config_kwargs(slots["omnisql-32b"])
    assert generator["deployment_config"] == {
        "autoscaling_config": {"min_replicas": 2, "max_replicas": 4},
        "name": "omnisql-32b-428a733140",
    }
    assert generator["model_loading_config"]["model_source"] == "seeklhy/OmniSQL-32B"
    assert config.roles["generator"] == "generator" and config.roles["selector"] == "selector"


def test_engine_kwargs_and_accelerator_pass_through() -> None:
    slot = VLLMServeSlot(
        backend="vllm_serve",
        model="m",
        model_source="org/m",
        accelerator_type="H100",
        engine_kwargs={"gpu_memory_utilization": 0.85, "max_model_len": 32768},
    )
    kwargs = llm_config_kwargs(slot)
    assert kwargs["accelerator_type"] == "H100"
    assert kwargs["engine_kwargs"]["gpu_memory_utilization"] == 0.85
    assert kwargs["engine_kwargs"]["max_model_len"] == 32768  # explicit engine kwargs win


def test_invalid_replica_range_and_missing_slots() -> None:
    slot = VLLMServeSlot(
        backend="vllm_serve", model="m", model_source="org/m", num_replicas=3, max_replicas=2
    )
    with pytest.raises(ValueError, match="max_replicas"):
        llm_config_kwargs(slot)
    with pytest.raises(ValueError, match="no vllm_serve slot"):
        serve_slots(_model_config("qwen2.5-coder-0.5b"))


def test_deployment_names_change_with_any_setting_of_a_slot() -> None:
    qwen = _model_config("qwen2.5-coder-32b")
    assert deployment_names(qwen) == ("LLMServer:qwen2_5-coder-32b-bdbba59c04",)
    assert deployment_names(_model_config("omnisql-32b")) == (
        "LLMServer:omnisql-32b-428a733140",
        # the selector runs one replica here, two under model=qwen2.5-coder-32b
        "LLMServer:qwen2_5-coder-32b-6aee2cf497",
    )
    wider = qwen.model_copy(
        update={
            "slots": {"default": qwen.slots["default"].model_copy(update={"max_model_len": 32768})}
        }
    )
    assert deployment_names(wider) != deployment_names(qwen)


@pytest.mark.parametrize("name", ["qwen2.5-coder-32b", "omnisql-32b"])
def test_the_app_is_one_openai_app_of_every_slots_llm_config(monkeypatch, name) -> None:
    """``ray.serve.llm`` needs vLLM, absent here: a stand-in records what build_app gives it."""
    built: dict = {}
    fake = types.ModuleType("ray.serve.llm")
    fake.LLMConfig = lambda **kwargs: kwargs
    fake.build_openai_app = lambda args: built.setdefault("app", args)
    monkeypatch.setitem(sys.modules, "ray.serve.llm", fake)
    config = _model_config(name)
    app = build_app(config)
    assert app == {"llm_configs": [llm_config_kwargs(s) for s in serve_slots(config).values()]}
