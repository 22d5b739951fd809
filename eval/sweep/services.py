"""What a real sweep shares across its workers: model servers and a pool of sandbox actors.

    driver:  sweep_services(cfg, sweep) ──► SandboxPool (Ray actors)
                                       ├─► shared_model_servers([cfg.model]):
                                       │   deployed(model): the Ray Serve LLM app of the GPU
                                       │     slots, deployed or attached (vllm_deploy)
                                       │   build_client(model): starts each local model
                                       │     server once, as a named Ray actor (one per slot)
                                       └─► an agentic run on a URI storage: one keeper actor
                                           for its cheatsheets (eval/sweep/cheatsheets.py)
    worker:  ConfiguredPipeline()      ──► SharedStorage.check(): the run's storage is reachable
                                           (from a URI storage: the live indexes fetched here)
                                       ├─► build_client(cfg.model) attaches to those servers
                                       └─► build_pipeline(cfg, client, sandbox, retrievers)

Each worker writes traces to its own folder under ``<run_dir>/traces`` so workers on
different processes never interleave lines of one file (a URI storage: each question's trace
published as it is written, ``SharedStorage.trace_sinks``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from omegaconf import DictConfig, OmegaConf

from core.config import section
from eval.sweep.cheatsheets import KeptCheatsheets, kept_cheatsheets, learned_root
from eval.sweep.config import SweepSettings
from eval.sweep.storage import SharedStorage
from models.backends.vllm_deploy import deployed
from models.backends.vllm_serve import deployment_names, has_serve_slots
from models.config import ModelSettings
from pipelines.pipeline import Pipeline
from pipelines.settings import CheatsheetSettings


class ConfiguredPipeline:
    """The picklable factory a worker actor calls to build the configured pipeline; raises
    :class:`~eval.sweep.errors.StorageUnreachable` where the run's storage cannot be reached."""

    def __init__(
        self,
        cfg: dict[str, Any],
        sandbox: Any,
        storage: SharedStorage | None,
        cheatsheets: KeptCheatsheets | None = None,
    ) -> None:
        self._cfg, self._sandbox, self._storage = cfg, sandbox, storage
        self._cheatsheets = cheatsheets  # the keeper's, on a URI storage

    def __call__(self) -> Pipeline:
        from models import build_client
        from pipelines.factory import build_pipeline, build_retrievers

        cfg = OmegaConf.create(self._cfg)
        sinks = None  # the pipeline.trace config's
        if self._storage is not None:
            self._storage.check()
            if self._storage.traces is not None:
                sinks = self._storage.trace_sinks(f"{self._storage.traces}/{uuid.uuid4().hex[:8]}")
        cells, examples = build_retrievers(cfg)
        return build_pipeline(
            cfg,
            client=build_client(cfg.model),
            sandbox=self._sandbox,
            cell_retriever=cells,
            example_retriever=examples,
            sinks=sinks,
            cheatsheets=self._cheatsheets,
        )


@contextmanager
def sweep_services(
    cfg: DictConfig, sweep: SweepSettings, storage: SharedStorage | None
) -> Iterator[tuple[ConfiguredPipeline, Any]]:
    """Start the shared sandbox pool and model servers (Ray must be up); stop them after.
    ``storage``: what the workers must reach (None: the config's paths, unchecked)."""
    from pipelines.sandbox import SandboxPool, SandboxSettings

    sandbox = SandboxPool.create(
        size=sweep.sandbox_actors,
        num_cpus=sweep.sandbox_num_cpus,
        limits=section(cfg, "pipeline.sandbox", SandboxSettings).limits,
    )
    try:
        # owns the servers (unless an outer shared_model_servers does); workers only attach
        with (
            shared_model_servers([section(cfg, "model", ModelSettings)]),
            _cheatsheets(cfg, storage) as cheatsheets,
        ):
            config = OmegaConf.to_container(cfg, resolve=True)
            yield ConfiguredPipeline(config, sandbox, storage, cheatsheets), sandbox
    finally:
        sandbox.close()


@contextmanager
def _cheatsheets(
    cfg: DictConfig, storage: SharedStorage | None
) -> Iterator[KeptCheatsheets | None]:
    """On a URI storage, the keeper of the sheets an agentic run learns (files under a lock
    elsewhere: None)."""
    root = learned_root(cfg)
    if storage is None or not storage.remote or root is None:
        yield None
        return
    settings = section(cfg, "pipeline.cheatsheet", CheatsheetSettings)
    with kept_cheatsheets(storage, settings) as cheatsheets:
        yield cheatsheets


@contextmanager
def shared_model_servers(models: Sequence[ModelSettings]) -> Iterator[int]:
    """Start the servers of every distinct ``model`` config once for all of ``models``.

    A sweep that finds a server up attaches to it and leaves it running, so the model loads once
    per invocation and its prompt cache (a schema evaluated by one configuration) serves the next
    configuration too. Yields how many distinct model configs were started; Ray must be up.

    The GPU slots' Serve LLM app is deployed here when every configuration needs the same one;
    configurations needing different ones share its route, so each deploys its own in turn
    (``sweep_services``).
    """
    from models import build_client

    with ExitStack() as stack:
        distinct = {model.model_dump_json(): model for model in models}
        gpu_apps = {deployment_names(m): m for m in distinct.values() if has_serve_slots(m)}
        if len(gpu_apps) == 1:
            stack.enter_context(deployed(*gpu_apps.values()))
        for model in distinct.values():
            stack.callback(build_client(model).close)
        yield len(distinct)
