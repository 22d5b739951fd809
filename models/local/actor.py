"""``LocalModelServer``: the Ray actor that owns a local model server, so pipelines share it.

    driver:  attach_or_start(name, model_path, config)  ──►  named actor "llm:<name>:<digest>"
             (created once, found by every later caller on the cluster)
    actor:   LocalServer.start()  ──►  endpoint (base_url, API key)  ──►  workers talk
             OpenAI-compatible HTTP to it, sending the key

The actor itself needs little CPU (``num_cpus`` from config, fractional by default); the
llama.cpp threads it starts are the model's. The server process dies with the actor.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import ray

from models.errors import ModelUnavailable
from models.local.server import LocalEndpoint, LocalServer, LocalServerSettings, announced

NAMESPACE = "scale-analytics"


@ray.remote
class LocalModelServer:
    def __init__(self, model_path: str, config: dict, alias: str) -> None:
        self._server = LocalServer(model_path, LocalServerSettings(**config), alias=alias)
        self._server.start()

    def endpoint(self) -> LocalEndpoint:
        # The server listens on 127.0.0.1 of the actor's node; callers on that node reach it.
        return self._server.endpoint

    def alive(self) -> bool:
        return self._server.alive()

    def shutdown(self) -> None:
        self._server.stop()


def actor_name(alias: str, model_path: Path, config: LocalServerSettings) -> str:
    digest = hashlib.sha1(
        f"{model_path.resolve()}|{config.model_dump_json()}".encode()
    ).hexdigest()[:10]
    return f"llm:{alias}:{digest}"


def attach_or_start(
    model_path: Path, config: LocalServerSettings, *, alias: str, num_cpus: float
) -> tuple[LocalEndpoint, Callable[[], None]]:
    """The endpoint (URL and API key) of the shared server for this model, and a close function.

    Only the caller that created the actor stops it on close; attachers leave it running.
    """
    name = actor_name(alias, model_path, config)
    created = False
    try:
        handle = ray.get_actor(name, namespace=NAMESPACE)
    except ValueError:
        handle = LocalModelServer.options(
            name=name, namespace=NAMESPACE, get_if_exists=True, num_cpus=num_cpus
        ).remote(str(model_path), config.model_dump(), alias)
        created = True
    try:
        with announced(alias, config) if created else nullcontext():
            endpoint = ray.get(handle.endpoint.remote())
    except ray.exceptions.RayError as exc:
        raise ModelUnavailable(f"the LocalModelServer actor {name} could not start: {exc}") from exc

    def close() -> None:
        if created:
            try:
                ray.get(handle.shutdown.remote(), timeout=30)
            finally:
                ray.kill(handle)

    return endpoint, close
