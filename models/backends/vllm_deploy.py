"""The Ray Serve LLM application of a config's GPU slots, up for as long as a run needs it.

    with deployed(model) as app:     # model: ModelSettings with vllm_serve slots; Ray is up
        client = build_client(model)       # talks to the app's OpenAI ingress (slot base_url)
        ...
    # on exit: the app is deleted if this call deployed it; one found running stays

Not running ──► deploy (``serve.run_many``, not waiting) ──► poll ``serve.status()`` until RUNNING,
at most ``model.deploy_timeout_s``, with one progress line on stderr ──► yield ──► delete.
Running with the same deployments (their names carry a fingerprint of the settings, see
:mod:`models.backends.vllm_serve`) ──► wait until RUNNING ──► yield; left running.
Running with other deployments ──► :class:`LLMAppMismatch`. Never ready ──► :class:`LLMAppTimeout`
naming each deployment's status, after deleting what this call deployed. A config without
vllm_serve slots yields None and touches nothing.

Ray Serve is reached through :class:`ServeControl` (``RayServeControl`` by default) so tests can
stand in for it without GPUs or vLLM.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO

from core.types import Frozen
from models.backends.vllm_serve import (
    APP_NAME,
    LLM_SERVER_PREFIX,
    build_app,
    deployment_names,
    has_serve_slots,
    serve_slots,
)
from models.config import ModelSettings
from models.errors import LLMAppFailed, LLMAppMismatch, LLMAppTimeout, ModelUnavailable

POLL_S = 2.0
READY = "RUNNING"
FAILED = frozenset({"DEPLOY_FAILED", "DELETING"})  # Serve's app states that will not turn RUNNING


class AppStatus(Frozen):
    """One application in ``serve.status()``: its state and each deployment's."""

    status: str  # NOT_STARTED | DEPLOYING | DEPLOY_FAILED | RUNNING | UNHEALTHY | DELETING
    deployments: dict[str, str]  # name -> UPDATING | HEALTHY | UNHEALTHY | DEPLOY_FAILED | …
    message: str = ""

    def describe(self) -> str:
        states = ", ".join(f"{name} {state}" for name, state in sorted(self.deployments.items()))
        return f"{self.status} ({states or 'no deployments yet'})"


class LLMApp(Frozen):
    """The application a run uses, and whether this run deployed it (and so deletes it)."""

    name: str
    deployments: tuple[str, ...]
    started: bool


class ServeControl(Protocol):
    """What :func:`deployed` needs of Ray Serve: an app's status, deploying it, deleting it."""

    def status(self, app: str) -> AppStatus | None: ...
    def run(self, app: str, config: ModelSettings) -> None: ...
    def delete(self, app: str) -> None: ...


class RayServeControl:
    """:class:`ServeControl` on the Ray Serve of the connected Ray."""

    def status(self, app: str) -> AppStatus | None:
        from ray import serve

        overview = serve.status().applications.get(app)
        if overview is None:
            return None
        return AppStatus(
            status=overview.status.value,
            deployments={name: d.status.value for name, d in overview.deployments.items()},
            message=overview.message,
        )

    def run(self, app: str, config: ModelSettings) -> None:
        from ray import serve

        # serve.run would block until RUNNING with no bound; deployed() waits, bounded.
        serve.run_many(
            [serve.RunTarget(target=build_app(config), name=app, route_prefix="/")],
            wait_for_ingress_deployment_creation=False,
            wait_for_applications_running=False,
        )

    def delete(self, app: str) -> None:
        from ray import serve

        serve.delete(app)


@contextmanager
def deployed(
    config: ModelSettings,
    *,
    control: ServeControl | None = None,
    progress: TextIO | None = None,
    poll_s: float = POLL_S,
) -> Iterator[LLMApp | None]:
    """Deploy (or attach to) the Serve LLM app of ``config``'s vllm_serve slots while inside."""
    if not has_serve_slots(config):
        yield None
        return
    control = control or RayServeControl()
    line = _ProgressLine(sys.stderr if progress is None else progress)
    expected = deployment_names(config)
    running = control.status(APP_NAME)
    if running is not None:
        found = tuple(sorted(n for n in running.deployments if n.startswith(LLM_SERVER_PREFIX)))
        if found != expected:
            raise LLMAppMismatch(
                f"Serve app {APP_NAME} is running {', '.join(found) or 'no model'}, but model="
                f"{config.name} needs {', '.join(expected)}: run with the config it was deployed "
                f"with, or delete it first (serve.delete({APP_NAME!r}))"
            )
        _wait_ready(control, config, line, poll_s)
        yield LLMApp(name=APP_NAME, deployments=expected, started=False)
        return
    try:
        control.run(APP_NAME, config)
        _wait_ready(control, config, line, poll_s)
        yield LLMApp(name=APP_NAME, deployments=expected, started=True)
    finally:
        control.delete(APP_NAME)


def _wait_ready(
    control: ServeControl, config: ModelSettings, line: _ProgressLine, poll_s: float
) -> None:
    timeout_s = config.deploy_timeout_s
    started = time.monotonic()
    try:
        while True:
            current = control.status(APP_NAME)
            elapsed = time.monotonic() - started
            if current is None:
                raise LLMAppFailed(f"Serve app {APP_NAME} went away while starting")
            if current.status == READY:
                return
            line.show(f"{APP_NAME}: {current.describe()} {elapsed:.0f}s of {timeout_s:g}s")
            if current.status in FAILED:
                raise LLMAppFailed(f"Serve app {APP_NAME}: {current.describe()} {current.message}")
            if elapsed >= timeout_s:
                raise LLMAppTimeout(
                    f"Serve app {APP_NAME} not ready after {elapsed:.0f}s "
                    f"(model.deploy_timeout_s={timeout_s:g}): {current.describe()}"
                )
            time.sleep(min(poll_s, timeout_s - elapsed))
    finally:
        line.end()


class _ProgressLine:
    """One line rewritten in place (carriage return); ended by a newline once shown."""

    def __init__(self, stream: TextIO) -> None:
        self._stream, self._width = stream, 0

    def show(self, text: str) -> None:
        self._stream.write("\r" + text.ljust(self._width))
        self._stream.flush()
        self._width = len(text)

    def end(self) -> None:
        if self._width:
            self._stream.write("\n")
            self._stream.flush()
            self._width = 0


def require_reachable(config: ModelSettings, *, timeout_s: float = 5.0) -> None:
    """For a command that runs without Ray (``ask``): raise :class:`ModelUnavailable`, saying
    what deploys it, when a GPU slot's OpenAI ingress does not answer ``GET /models``."""
    import httpx

    for slot in serve_slots(config).values() if has_serve_slots(config) else ():
        try:
            httpx.get(f"{slot.base_url.rstrip('/')}/models", timeout=timeout_s).raise_for_status()
        except httpx.HTTPError as exc:
            raise ModelUnavailable(
                f"model={config.name}: its Serve LLM app does not answer at {slot.base_url} "
                f"({type(exc).__name__}); `scale-analytics serve model={config.name}` or "
                f"`python -m models.backends.vllm_serve model={config.name}` deploys it"
            ) from None
