"""deployed(): the Ray Serve LLM app's lifecycle against a stand-in for Ray Serve (no GPU, no vLLM).

The stand-in keeps one app per name: ``run`` adds it DEPLOYING, and it turns RUNNING after
``polls_to_ready`` status calls (never when None) or DEPLOY_FAILED when ``fails``.
"""

from __future__ import annotations

import io
import re
import time

import pytest

from core.config import load_config, section
from models.backends import vllm_deploy
from models.backends.vllm_deploy import (
    AppStatus,
    LLMApp,
    RayServeControl,
    deployed,
)
from models.backends.vllm_serve import APP_NAME, deployment_names
from models.config import ModelSettings
from models.errors import LLMAppFailed, LLMAppMismatch, LLMAppTimeout

INGRESS = "OpenAiIngress"


def _model_config(name: str, *overrides: str) -> ModelSettings:
    return section(load_config([f"model={name}", *overrides]), "model", ModelSettings)


def _app(config: ModelSettings, status: str, deployment_status: str) -> AppStatus:
    names = dict.fromkeys(deployment_names(config), deployment_status)
    return AppStatus(status=status, deployments={**names, INGRESS: "HEALTHY"})


class FakeServe:
    def __init__(
        self, running: AppStatus | None = None, polls_to_ready: int | None = 1, fails: bool = False
    ) -> None:
        self.apps = {} if running is None else {APP_NAME: running}
        self.polls_to_ready, self.fails = polls_to_ready, fails
        self.calls: list[str] = []

    def status(self, app: str) -> AppStatus | None:
        current = self.apps.get(app)
        if current is not None and current.status == "DEPLOYING":
            if self.fails:
                current = current.model_copy(update={"status": "DEPLOY_FAILED"})
            elif self.polls_to_ready is not None:
                self.polls_to_ready -= 1
                if self.polls_to_ready < 0:
                    current = current.model_copy(update={"status": "RUNNING"})
            self.apps[app] = current
        return current

    def run(self, app: str, config: ModelSettings) -> None:
        self.calls.append(f"run {app} {config.name}")
        self.apps[app] = _app(config, "DEPLOYING", "UPDATING")

    def delete(self, app: str) -> None:
        self.calls.append(f"delete {app}")
        self.apps.pop(app, None)


@pytest.mark.parametrize("name", ["qwen2.5-coder-32b", "omnisql-32b"])
def test_an_app_not_running_is_deployed_waited_for_and_deleted_on_exit(name) -> None:
    config = _model_config(name)
    serve, progress = FakeServe(polls_to_ready=2), io.StringIO()
    with deployed(config, control=serve, progress=progress, poll_s=0.01) as app:
        assert app == LLMApp(name=APP_NAME, deployments=deployment_names(config), started=True)
        assert serve.calls == [f"run {APP_NAME} {name}"]
        assert serve.apps[APP_NAME].status == "RUNNING"
    assert serve.calls[-1] == f"delete {APP_NAME}" and APP_NAME not in serve.apps
    # one line, rewritten in place, naming the app, each deployment's state and the seconds
    lines = progress.getvalue()
    assert lines.count("\n") == 1 and lines.endswith("\n") and lines.count("\r") == 2
    first = lines.split("\r")[1]
    assert first.startswith(f"{APP_NAME}: DEPLOYING (")
    assert all(f"{d} UPDATING" in first for d in deployment_names(config))
    assert f"{INGRESS} HEALTHY" in first and first.rstrip().endswith("0s of 1800s")


def test_a_running_app_with_the_same_settings_is_attached_and_left_running() -> None:
    config = _model_config("qwen2.5-coder-32b")
    serve, progress = FakeServe(running=_app(config, "RUNNING", "HEALTHY")), io.StringIO()
    with deployed(config, control=serve, progress=progress) as app:
        assert app is not None and not app.started
    assert serve.calls == [] and serve.apps[APP_NAME].status == "RUNNING"
    assert progress.getvalue() == ""  # ready at once: nothing to say


def test_a_running_app_with_other_settings_is_a_typed_error_and_is_left_alone() -> None:
    omnisql = _model_config("omnisql-32b")
    serve = FakeServe(running=_app(omnisql, "RUNNING", "HEALTHY"))
    with pytest.raises(LLMAppMismatch, match=f"{APP_NAME} is running LLMServer:omnisql-32b"):
        with deployed(_model_config("qwen2.5-coder-32b"), control=serve):
            pytest.fail("a mismatching app must not be used")
    assert serve.calls == [] and APP_NAME in serve.apps


def test_an_app_never_ready_times_out_within_the_bound_naming_its_deployments_and_is_deleted():
    config = _model_config("qwen2.5-coder-32b", "model.deploy_timeout_s=0.3")
    serve, progress = FakeServe(polls_to_ready=None), io.StringIO()
    started = time.monotonic()
    with pytest.raises(LLMAppTimeout) as raised:
        with deployed(config, control=serve, progress=progress, poll_s=0.05):
            pytest.fail("a deploy that is not ready must not be used")
    assert time.monotonic() - started < 2
    message = str(raised.value)
    assert re.search(rf"{APP_NAME} not ready after \d+s \(model.deploy_timeout_s=0.3\)", message)
    assert f"DEPLOYING ({deployment_names(config)[0]} UPDATING, {INGRESS} HEALTHY)" in message
    assert serve.calls == [f"run {APP_NAME} {config.name}", f"delete {APP_NAME}"]
    assert progress.getvalue().endswith("\n")


def test_a_failed_deploy_is_a_typed_error_at_once_and_is_deleted() -> None:
    config = _model_config("qwen2.5-coder-32b")
    serve = FakeServe(fails=True)
    with pytest.raises(LLMAppFailed, match=f"{APP_NAME}: DEPLOY_FAILED"):
        with deployed(config, control=serve, progress=io.StringIO()):
            pass
    assert serve.calls[-1] == f"delete {APP_NAME}"


def test_what_was_deployed_is_deleted_when_the_run_fails() -> None:
    serve = FakeServe(polls_to_ready=0)
    with pytest.raises(RuntimeError, match="sweep failed"):
        with deployed(_model_config("omnisql-32b"), control=serve, progress=io.StringIO()):
            raise RuntimeError("sweep failed")
    assert serve.calls[-1] == f"delete {APP_NAME}"


def test_a_config_without_gpu_slots_touches_nothing() -> None:
    serve = FakeServe()
    with deployed(_model_config("qwen2.5-coder-0.5b"), control=serve) as app:
        assert app is None
    assert serve.calls == []


def test_ray_serve_control_reads_serve_status_and_deploys_without_waiting(monkeypatch) -> None:
    from ray import serve
    from ray.serve._private.common import DeploymentStatus, DeploymentStatusTrigger
    from ray.serve.schema import (
        ApplicationStatus,
        ApplicationStatusOverview,
        DeploymentStatusOverview,
        ServeStatus,
    )

    deployment = DeploymentStatusOverview(
        status=DeploymentStatus.UPDATING,
        status_trigger=DeploymentStatusTrigger.CONFIG_UPDATE_STARTED,
        replica_states={},
        message="",
    )
    overview = ApplicationStatusOverview(
        status=ApplicationStatus.DEPLOYING,
        message="loading",
        last_deployed_time_s=0.0,
        deployments={"LLMServer:m-1": deployment},
    )
    monkeypatch.setattr(serve, "status", lambda: ServeStatus(applications={APP_NAME: overview}))
    control = RayServeControl()
    assert control.status(APP_NAME) == AppStatus(
        status="DEPLOYING", deployments={"LLMServer:m-1": "UPDATING"}, message="loading"
    )
    assert control.status("other") is None

    runs: list = []
    monkeypatch.setattr(vllm_deploy, "build_app", lambda config: f"app of {config.name}")
    monkeypatch.setattr(serve, "run_many", lambda targets, **kw: runs.append((targets, kw)))
    control.run(APP_NAME, _model_config("qwen2.5-coder-32b"))
    [([target], options)] = runs
    assert (target.target, target.name, target.route_prefix) == (
        "app of qwen2.5-coder-32b",
        APP_NAME,
        "/",
    )
    assert options == {
        "wait_for_ingress_deployment_creation": False,
        "wait_for_applications_running": False,
    }


def test_the_standalone_command_deploys_serves_until_ctrl_c_then_deletes(monkeypatch, capsys):
    from models.backends import vllm_serve

    serve = FakeServe(polls_to_ready=0)
    monkeypatch.setattr(vllm_deploy, "RayServeControl", lambda: serve)

    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(vllm_serve.time, "sleep", interrupted)
    assert vllm_serve.main(["model=qwen2.5-coder-32b"]) == 0
    assert serve.calls == [f"run {APP_NAME} qwen2.5-coder-32b", f"delete {APP_NAME}"]
    assert "serving LLMServer:qwen2_5-coder-32b-" in capsys.readouterr().out


def test_ask_is_told_what_deploys_an_app_that_does_not_answer_and_passes_one_that_does():
    import socket
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from models.errors import ModelUnavailable

    class Models(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.end_headers()
            self.wfile.write(b'{"data": []}')

        def log_message(self, *args):
            pass

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    down = _model_config(
        "qwen2.5-coder-32b", f"model.slots.default.base_url=http://127.0.0.1:{closed}/v1"
    )
    with pytest.raises(
        ModelUnavailable, match=r"does not answer at .*serve model=qwen2.5-coder-32b"
    ):
        vllm_deploy.require_reachable(down, timeout_s=2)

    server = HTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        up = _model_config(
            "qwen2.5-coder-32b", f"model.slots.default.base_url=http://127.0.0.1:{port}/v1"
        )
        vllm_deploy.require_reachable(up, timeout_s=2)
    finally:
        server.shutdown()
    vllm_deploy.require_reachable(
        _model_config("qwen2.5-coder-0.5b")
    )  # no GPU slot: nothing to reach
