"""Fixtures shared by the model-layer tests."""

from pathlib import Path

import pytest

from models.local.server import LocalServer, LocalServerSettings
from models.registry import get_spec
from models.store import ModelStore


@pytest.fixture(scope="session")
def model_05b_path() -> Path:
    from core.config import load_config

    store = ModelStore(load_config().paths.models)
    spec = get_spec("qwen2.5-coder-0.5b")
    if not store.is_verified(spec):
        pytest.skip("the 0.5B model is not pulled: scale-analytics models pull qwen2.5-coder-0.5b")
    return store.path_for(spec)


@pytest.fixture(scope="session")
def server_05b(model_05b_path: Path):
    """One real llama.cpp server with the 0.5B model for the whole session (small context)."""
    with LocalServer(
        model_05b_path,
        LocalServerSettings(n_parallel=4, ctx_per_slot=4096),
        alias="qwen2.5-coder-0.5b",
    ) as server:
        yield server
