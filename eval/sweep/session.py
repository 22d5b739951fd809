"""Reach Ray for a sweep: join the configured cluster or start a local one, quietly.

    with ray_session(SweepSettings().ray):      # local Ray: 2 CPUs, no dashboard, auth off
        run_sweep(...)

Joining a cluster (``sweep.ray.address``) keeps the cluster's authentication: ``ray_cluster.yaml``
runs every node and driver with ``RAY_AUTH_MODE=token``.

An already-initialised Ray (a test fixture, a notebook) is used as is and left running.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

import ray
import ray.data

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
            address=config.address,
            num_cpus=config.num_cpus if local else None,
            num_gpus=config.num_gpus if local else None,
            include_dashboard=config.include_dashboard,
            logging_level=logging.WARNING,
        )
    _quiet_ray_data()
    try:
        yield
    finally:
        if started_here:
            ray.shutdown()


def _quiet_ray_data() -> None:
    """The sweep draws its own progress bar; Ray Data's bars and per-run banners would interleave."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
