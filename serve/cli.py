"""``scale-analytics serve [key=value ...]``: the online endpoint on Ray Serve.

    $ scale-analytics serve serve.demo=true            # the demo database, as "claims"
    $ scale-analytics serve serve.databases.sales=/data/sales.duckdb
    $ scale-analytics serve serve.port=8080 model=qwen2.5-coder-0.5b serve.default_profile=fast

Starts a local Ray (or joins ``sweep.ray.address``), Serve's HTTP proxy on
``serve.host:serve.port``, the read-only sandbox actors and the model servers (as ``eval`` does:
``eval.sweep.services``; GPU slots: the Ray Serve LLM app, deployed or attached), registers the
databases given as ``serve.databases.NAME=PATH`` (a SQLite or DuckDB file, or a
``postgresql://`` URI; their L0 indexes are built as ``ask`` builds them; ``serve.examples.NAME``
names a file of its own solved questions), and serves
``serve/app.py`` there until Ctrl-C or SIGTERM, which stop what it started: its app, the model
servers, the sandbox actors, Serve and Ray.

Refused, with one line on stderr and exit code 2: a non-loopback ``serve.host`` with no API
key configured, a port already in use (on a local Ray; a cluster's Serve proxy keeps the port it
was started with), a database file that is missing or of unknown engine, GPU slots whose
``base_url`` is not on ``serve.port`` or that would share ``serve.route_prefix=/`` with this app,
a Ray Serve LLM app that runs other settings or is not ready in ``model.deploy_timeout_s``.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from core.cli import split_overrides
from core.cli_errors import fail, user_errors
from serve.errors import ApiError, ServeConfigError

if TYPE_CHECKING:
    from models.config import ModelSettings

PROG = "scale-analytics serve"
NAMED_PREFIXES = ("serve.databases.", "serve.examples.")


def split_named(overrides: list[str]) -> tuple[dict[str, dict[str, str]], list[str]]:
    """``serve.databases.NAME=PATH`` and ``serve.examples.NAME=FILE`` arguments (names Hydra's
    struct config would refuse to add) apart from the other overrides.

    >>> split_named(["serve.databases.demo=/d/claims.sqlite", "serve.port=9000"])
    ({'databases': {'demo': '/d/claims.sqlite'}, 'examples': {}}, ['serve.port=9000'])
    """
    named: dict[str, dict[str, str]] = {p.split(".")[1]: {} for p in NAMED_PREFIXES}
    rest = []
    for override in overrides:
        key, _, value = override.partition("=")
        prefix = next((p for p in NAMED_PREFIXES if key.startswith(p) and key != p), None)
        if prefix is None:
            rest.append(override)
        else:
            named[prefix.split(".")[1]][key[len(prefix) :]] = value
    return named, rest


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (where an open key ring is allowed).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def port_in_use(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def profile_configs(overrides: list[str], profiles: dict[str, tuple[str, ...]]) -> dict:
    """profile -> the composed config (plain dict): the command line's overrides, then the
    profile's (a profile's group choice replaces the command line's choice of that group)."""
    from omegaconf import OmegaConf

    from core.config import load_config

    cfgs = {}
    for profile, extra in profiles.items():
        chosen = {o.split("=", 1)[0] for o in extra}
        kept = [o for o in overrides if o.split("=", 1)[0] not in chosen]
        cfgs[profile] = OmegaConf.to_container(load_config([*kept, *extra]), resolve=True)
    return cfgs


def check_gpu_slots(model: ModelSettings, port: int, route_prefix: str) -> None:
    """The Ray Serve LLM app of GPU slots sits at ``/`` on the same Serve proxy as this app: its
    slots must name ``port``, and this app needs a prefix of its own.

    >>> from models.config import ModelSettings
    >>> gpu = ModelSettings(name="g", slots={"default": {"backend": "vllm_serve", "model": "m",
    ...                                                  "model_source": "org/m"}})
    >>> check_gpu_slots(gpu, 8000, "/analytics")
    >>> check_gpu_slots(gpu, 8000, "/")
    Traceback (most recent call last):
    serve.errors.ServeConfigError: the Ray Serve LLM app of the GPU slots takes the route /: ...
    """
    from models.config import VLLMServeSlot

    for name, slot in model.slots.items():
        if not isinstance(slot, VLLMServeSlot):
            continue
        if urlsplit(slot.base_url).port != port:
            raise ServeConfigError(
                f"model.slots.{name}.base_url {slot.base_url} is not on serve.port={port}: the "
                "Ray Serve LLM app answers on the same Serve proxy as this app"
            )
        if route_prefix == "/":
            raise ServeConfigError(
                "the Ray Serve LLM app of the GPU slots takes the route /: give this app its own, "
                "e.g. serve.route_prefix=/analytics"
            )


@contextmanager
def _serve_proxy(host: str, port: int) -> Iterator[None]:
    """Serve with its HTTP proxy on host:port, shut down after unless it was already up."""
    from ray import serve

    already_up = bool(serve.status().proxies)
    serve.start(http_options={"host": host, "port": port})
    try:
        yield
    finally:
        if not already_up:
            serve.shutdown()


@contextmanager
def _stop_on_sigterm() -> Iterator[threading.Event]:
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str]) -> int:
    from omegaconf import OmegaConf

    from core.config import load_config, section
    from models.config import ModelSettings
    from models.errors import LLMAppError
    from serve.keys import KeyRing
    from serve.settings import ServeSettings

    words, overrides = split_overrides(argv)
    if any(w in {"-h", "--help"} for w in words):
        print(__doc__)
        return 0
    if words:
        return fail(PROG, ServeConfigError(f"unexpected argument {words[0]!r} (use key=value)"))
    named, overrides = split_named(overrides)
    try:
        cfg = load_config(overrides)
        settings = section(cfg, "serve", ServeSettings)
        settings = settings.model_copy(
            update={key: {**getattr(settings, key), **values} for key, values in named.items()}
        )
        ring = KeyRing.build(env_key=os.environ.get(settings.keys.env_var), file=settings.keys.file)
        if ring.open and not is_loopback(settings.host):
            raise ServeConfigError(
                f"refusing to listen on {settings.host} without an API key: set "
                f"{settings.keys.env_var} or serve.keys.file, or keep serve.host=127.0.0.1"
            )
        if settings.default_profile not in settings.profiles:
            raise ServeConfigError(f"serve.default_profile {settings.default_profile!r} is unknown")
        joins_cluster = OmegaConf.select(cfg, "sweep.ray.address") is not None
        if not joins_cluster and port_in_use(settings.host, settings.port):
            raise ServeConfigError(
                f"port {settings.port} on {settings.host} is already in use "
                "(another server is there; pick another with serve.port=N)"
            )
        cfgs = profile_configs(overrides, settings.profiles)
        check_gpu_slots(
            ModelSettings.model_validate(cfgs[settings.default_profile]["model"]),
            settings.port,
            settings.route_prefix,
        )
        registered = _register(settings, cfg.paths.demo)
    except (ValueError, *user_errors()) as exc:
        return fail(PROG, exc)
    try:
        return _run(cfg, cfgs, settings, ring, registered)
    except LLMAppError as exc:
        return fail(PROG, exc)


def _register(settings, demo_dir: str) -> list:
    from pipelines.sandbox.postgres import redacted
    from serve.databases import register
    from serve.store import StateStore
    from serve.types import RegisterRequest

    store = StateStore(settings.state_dir)
    unnamed = sorted(set(settings.examples) - set(settings.databases))
    if unnamed:
        raise ServeConfigError(f"serve.examples.{unnamed[0]}: no serve.databases.{unnamed[0]}")
    requests = [
        RegisterRequest(name=name, path=path, examples=settings.examples.get(name))
        for name, path in settings.databases.items()
    ]
    if settings.demo:
        from pathlib import Path

        from eval.demo import build_demo

        demo = build_demo(Path(demo_dir))
        requests.append(
            RegisterRequest(
                name=demo.db_id,
                path=str(demo.database),
                description_dir=str(demo.description_dir),
            )
        )
    out = []
    for request in requests:
        try:
            out.append(register(store, request, "config"))
        except ApiError as exc:
            raise ServeConfigError(
                f"serve.databases.{request.name}: {exc.message} ({redacted(request.path)})"
            ) from None
    return out


def _run(cfg, cfgs, settings, ring, registered) -> int:
    from ray import serve

    from eval.sweep.config import SweepSettings
    from eval.sweep.services import sweep_services
    from eval.sweep.session import ray_session
    from pipelines.indexing.builder.ensure import ensure_indexes
    from serve.app import APP_NAME, build_application
    from serve.databases import database_ref

    sweep = SweepSettings.from_cfg(cfg).model_copy(
        update={
            "sandbox_actors": settings.sandbox_actors,
            "sandbox_num_cpus": settings.sandbox_num_cpus,
        }
    )
    default_cfg = cfgs[settings.default_profile]
    if registered:
        print(ensure_indexes(cfg, [database_ref(r.name, r) for r in registered]).summary())
    # The handler goes in after ray.init, which installs its own. The proxy starts before the
    # model servers: a GPU slots' Serve LLM app deployed first would start it on Serve's defaults.
    with (
        ray_session(sweep.ray),
        _stop_on_sigterm() as stop,
        _serve_proxy(settings.host, settings.port),
    ):
        from omegaconf import OmegaConf

        with sweep_services(OmegaConf.create(default_cfg), sweep, None) as (_, sandbox):
            try:
                serve.run(
                    build_application(cfgs, settings, ring, sandbox),
                    name=APP_NAME,
                    route_prefix=settings.route_prefix,
                    blocking=False,
                )
                url = f"http://{settings.host}:{settings.port}{settings.route_prefix.rstrip('/')}"
                print(f"serving on {url}/ (API docs: {url}/docs); Ctrl-C stops", flush=True)
                while not stop.wait(0.5):
                    pass
                print(f"{PROG}: SIGTERM, stopping", file=sys.stderr)
            finally:
                serve.delete(APP_NAME)  # the LLM app and Serve go when their owners exit
    return 0
