"""``scale-analytics serve [key=value ...]``: the online endpoint on Ray Serve.

    $ scale-analytics serve serve.demo=true            # the demo database, as "claims"
    $ scale-analytics serve serve.databases.sales=/data/sales.duckdb
    $ scale-analytics serve serve.port=8080 model=qwen2.5-coder-0.5b serve.default_profile=fast

Starts a local Ray (or joins ``sweep.ray.address``), the read-only sandbox actors and the model
servers (as ``eval`` does: ``eval.sweep.services``), registers the databases given as
``serve.databases.NAME=PATH`` (a SQLite or DuckDB file, or a ``postgresql://`` URI; their L0
indexes are built as ``ask`` builds them), and serves ``serve/app.py`` on
``serve.host:serve.port`` until Ctrl-C or SIGTERM, which stop Serve, the model servers, the
sandbox actors and the Ray it started.

Refused, with one line on stderr and exit code 2: a non-loopback ``serve.host`` with no API
key configured, a port already in use (on a local Ray; a cluster's Serve proxy keeps the port it
was started with), a database file that is missing or of unknown engine.
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

from core.cli import split_overrides
from core.cli_errors import fail, user_errors
from serve.errors import ApiError, ServeConfigError

PROG = "scale-analytics serve"
DATABASE_PREFIX = "serve.databases."


def split_databases(overrides: list[str]) -> tuple[dict[str, str], list[str]]:
    """``serve.databases.NAME=PATH`` arguments (a name Hydra's struct config would refuse to add)
    apart from the other overrides.

    >>> split_databases(["serve.databases.demo=/d/claims.sqlite", "serve.port=9000"])
    ({'demo': '/d/claims.sqlite'}, ['serve.port=9000'])
    """
    databases, rest = {}, []
    for override in overrides:
        key, _, value = override.partition("=")
        if key.startswith(DATABASE_PREFIX) and len(key) > len(DATABASE_PREFIX):
            databases[key[len(DATABASE_PREFIX) :]] = value
        else:
            rest.append(override)
    return databases, rest


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
    from serve.keys import KeyRing
    from serve.settings import ServeSettings

    words, overrides = split_overrides(argv)
    if any(w in {"-h", "--help"} for w in words):
        print(__doc__)
        return 0
    if words:
        return fail(PROG, ServeConfigError(f"unexpected argument {words[0]!r} (use key=value)"))
    databases, overrides = split_databases(overrides)
    try:
        cfg = load_config(overrides)
        settings = section(cfg, "serve", ServeSettings)
        settings = settings.model_copy(update={"databases": {**settings.databases, **databases}})
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
        registered = _register(settings, cfg.paths.demo)
    except (ValueError, *user_errors()) as exc:
        return fail(PROG, exc)
    return _run(cfg, cfgs, settings, ring, registered)


def _register(settings, demo_dir: str) -> list:
    from pipelines.sandbox.postgres import redacted
    from serve.databases import register
    from serve.store import StateStore
    from serve.types import RegisterRequest

    store = StateStore(settings.state_dir)
    requests = [RegisterRequest(name=name, path=path) for name, path in settings.databases.items()]
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
    # The handler goes in after ray.init, which installs its own.
    with ray_session(sweep.ray), _stop_on_sigterm() as stop:
        from omegaconf import OmegaConf

        with sweep_services(OmegaConf.create(default_cfg), sweep, None) as (_, sandbox):
            try:
                serve.start(http_options={"host": settings.host, "port": settings.port})
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
                serve.shutdown()
    return 0
