from pathlib import Path

import httpx
import pytest

from models.local.server import LocalServerSettings

ray = pytest.importorskip("ray")


@pytest.fixture
def ray_local(monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


@pytest.mark.ray
@pytest.mark.real_model
def test_actor_is_shared_and_stopped_by_its_creator(ray_local, model_05b_path: Path) -> None:
    from models.local.actor import attach_or_start

    config = LocalServerSettings(n_parallel=1, ctx_per_slot=1024)
    endpoint, close_creator = attach_or_start(
        model_05b_path, config, alias="qwen2.5-coder-0.5b", num_cpus=0.5
    )
    again, close_attacher = attach_or_start(
        model_05b_path, config, alias="qwen2.5-coder-0.5b", num_cpus=0.5
    )
    assert again == endpoint and endpoint.api_key  # attachers get the creator's server and key
    url = endpoint.base_url
    auth = {"Authorization": f"Bearer {endpoint.api_key}"}
    assert httpx.get(url + "/models", timeout=10).status_code == 401  # the key is required
    assert httpx.get(url + "/models", headers=auth, timeout=10).status_code == 200
    close_attacher()  # an attacher leaves the shared server running
    assert httpx.get(url + "/models", headers=auth, timeout=10).status_code == 200
    close_creator()
    with pytest.raises(httpx.HTTPError):
        httpx.get(url + "/models", timeout=5)
