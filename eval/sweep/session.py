"""Reach Ray for a sweep: join the configured cluster or start a local one, quietly.

    with ray_session(SweepSettings().ray):      # local Ray: 2 CPUs, no dashboard, auth off
        run_sweep(...)

Joining a cluster (``sweep.ray.address``) keeps the cluster's authentication: ``ray_cluster.yaml``
runs every node and driver with ``RAY_AUTH_MODE=token``.

An already-initialised Ray (a test fixture, a notebook) is used as is and left running. Without
an address the run starts its own Ray (``address="local"``), never the one ``ray.init()`` would
otherwise join: the cluster named in ``$TMPDIR/ray/ray_current_cluster``, which a cluster stopped
without ``ray stop`` leaves behind and a foreign one on the machine writes.

Under the CLI (``core.stop``), a Ctrl-C or SIGTERM ends the session cleanly: the signal handlers
``ray.init`` replaces are taken back, and Ray's relay of its workers' lines stops at the first
signal (the actors killed on the way out would each print why, and Ray's retries).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

import ray
import ray.data

from core import stop
from eval.sweep.config import RayInitSettings

# Local runs need neither token auth nor usage reporting; an environment that sets them wins.
LOCAL_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


@contextmanager
def ray_session(config: RayInitSettings) -> Iterator[None]:
    for name, value in LOCAL_ENV.items():
        if name == "RAY_AUTH_MODE" and config.address is not None:
            continue  # a cluster's auth mode, or Ray's default (token when ~/.ray/auth_token exists)
        os.environ.setdefault(name, value)
    started_here = not ray.is_initialized()
    if started_here:
        local = config.address is None
        ray.init(
            address="local" if local else config.address,
            num_cpus=config.num_cpus if local else None,
            num_gpus=config.num_gpus if local else None,
            include_dashboard=config.include_dashboard,
            logging_level=logging.WARNING,
        )
        stop.reclaim()
    _quiet_ray_data()
    remove = stop.on_stop(_mute_ray_output)
    try:
        yield
    finally:
        remove()
        if started_here:
            ray.shutdown()


def _mute_ray_output() -> None:
    """Stop relaying Ray's worker lines and raylet messages to this terminal (Ray 2.60's private
    printers; pinned in pyproject)."""
    from ray._private import worker
    from ray._private.ray_logging import global_worker_stdstream_dispatcher

    global_worker_stdstream_dispatcher.remove_handler("ray_print_logs")
    worker.print_to_stdstream = lambda *args, **kwargs: None  # the raylet messages' printer


def _quiet_ray_data() -> None:
    """The sweep draws its own progress bar; Ray Data's bars and per-run banners would interleave."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
