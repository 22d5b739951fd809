from pathlib import Path

import httpx
import pytest

from models.errors import ModelUnavailable
from models.local.server import LocalServer, LocalServerSettings, shared_server


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="does not exist"):
        LocalServer(tmp_path / "absent.gguf", LocalServerSettings()).start()


def test_corrupt_model_file_fails_with_the_server_log(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 4096)
    server = LocalServer(corrupt, LocalServerSettings(startup_timeout_s=60))
    with pytest.raises(ModelUnavailable, match="exited with code") as info:
        server.start()
    assert "corrupt.gguf" in str(info.value)
    assert not server.alive()


def test_base_url_before_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="not started"):
        _ = LocalServer(tmp_path / "m.gguf", LocalServerSettings()).base_url


@pytest.mark.real_model
def test_shared_server_is_reused_and_stopped_by_the_last_user(model_05b_path: Path) -> None:
    config = LocalServerSettings(n_parallel=1, ctx_per_slot=1024)
    first, release_first = shared_server(model_05b_path, config, alias="qwen2.5-coder-0.5b")
    second, release_second = shared_server(model_05b_path, config, alias="qwen2.5-coder-0.5b")
    assert first is second and first.alive()
    models = httpx.get(first.base_url + "/models", headers=first.auth_headers, timeout=10).json()
    assert "qwen2.5-coder-0.5b" in str(models)
    release_first()
    release_first()  # releasing twice counts once
    assert first.alive()
    release_second()
    assert not first.alive()


@pytest.mark.parametrize(
    ("policy", "inherited", "expected"),
    [
        ("passive", {}, "PASSIVE"),
        ("active", {"OMP_WAIT_POLICY": "PASSIVE"}, "ACTIVE"),  # the configured policy wins
        (None, {}, None),  # left unset: OpenMP's own default
        (None, {"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"),  # null keeps the environment's
    ],
)
def test_wait_policy_reaches_the_server_environment(
    tmp_path: Path, policy: str | None, inherited: dict[str, str], expected: str | None
) -> None:
    server = LocalServer(tmp_path / "m.gguf", LocalServerSettings(omp_wait_policy=policy))
    env = server.child_env({"PATH": "/bin", **inherited})
    assert env.get("OMP_WAIT_POLICY") == expected
    assert env["PATH"] == "/bin"


def test_wait_policy_default_and_model_config(tmp_path: Path) -> None:
    from models.config import LocalSlot

    assert LocalServerSettings().omp_wait_policy == "passive"  # unchanged behaviour
    slot = LocalSlot(backend="local", model="m", omp_wait_policy=None, poll=50, n_batch=256)
    server_config = LocalServerSettings(
        **slot.model_dump(include=set(LocalServerSettings.model_fields))
    )
    assert (server_config.omp_wait_policy, server_config.poll, server_config.n_batch) == (
        None,
        50,
        256,
    )
    with pytest.raises(ValueError):
        LocalServerSettings(omp_wait_policy="spin")
