"""Run index builds over many databases: in-process, or as Ray tasks on a pool of workers.

[DatabaseRef] ──► jobs (examples first, then one per database)
    ──unchanged_report (driver, cheap)──► "unchanged" without starting anything
    ──local──► build_* in turn, the embedder on every core (``local_threads``)
    ──ray────► ActorPool of IndexWorker (each loads the embedding model once)
    ──► [BuildReport], with a rich progress bar on stderr

    reports = build_all(dbs, settings)            # settings.executor: "ray" | "local"
    [r.status for r in reports]  ──►  ['built', 'built', 'unchanged', ...]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from core import stop
from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder.reports import BuildReport, unchanged_report
from pipelines.indexing.settings import IndexSettings

Job = DatabaseRef | None  # None: the example index

# LANCEDB_LOG=error: LanceDB's Rust logger otherwise warns on every table it creates.
WORKER_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "LANCEDB_LOG": "error",
}


def _run(job: Job, settings: IndexSettings) -> BuildReport:
    # Imported where the build runs: the driver never loads lancedb (it warns when Ray forks).
    from pipelines.indexing.builder.build import build_database, build_examples

    return build_examples(settings) if job is None else build_database(job, settings)


class IndexWorker:
    """A Ray actor that builds indexes; the embedding model is loaded once, when it starts."""

    def __init__(self, threads: int) -> None:
        from pipelines.indexing.embedder import THREADS_ENV, load_model

        os.environ[THREADS_ENV] = str(threads)  # fractional CPUs: never more threads than cores
        load_model()

    def build(self, job: Job, settings: IndexSettings) -> BuildReport:
        return _run(job, settings)


def _local(jobs: Sequence[Job], settings: IndexSettings) -> Iterator[BuildReport]:
    from pipelines.indexing.embedder import embedding_threads

    with embedding_threads(settings.local_threads or os.cpu_count() or 1):
        for job in jobs:
            yield _run(job, settings)


def _ray(jobs: Sequence[Job], settings: IndexSettings) -> Iterator[BuildReport]:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray.util import ActorPool

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            address="local",  # its own Ray, never a cluster found in ray_current_cluster
            num_cpus=settings.ray_num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": WORKER_ENV},
        )
        stop.reclaim()  # ray.init replaced the CLI's SIGTERM handler
    try:
        worker = ray.remote(num_cpus=settings.worker_cpus)(IndexWorker)
        threads = max(1, int(settings.worker_cpus))
        actors = [worker.remote(threads) for _ in range(min(settings.workers, len(jobs)))]
        pool = ActorPool(actors)
        for job in jobs:
            pool.submit(lambda actor, j: actor.build.remote(j, settings), job)
        while pool.has_next():
            yield pool.get_next_unordered()
        for actor in actors:
            ray.kill(actor)
    finally:
        if started_here:
            ray.shutdown()


def _name(item: Job | BuildReport) -> str:
    """The example index's name or the database's, for a job or its report."""
    if isinstance(item, BuildReport):
        return "examples" if item.kind == "examples" else item.name
    return "examples" if item is None else item.db_id


EXECUTORS: dict[str, Callable[[Sequence[Job], IndexSettings], Iterator[BuildReport]]] = {
    "local": _local,
    "ray": _ray,
}


def build_all(
    dbs: Sequence[DatabaseRef],
    settings: IndexSettings,
    *,
    examples: bool = True,
    progress: bool = True,
) -> list[BuildReport]:
    """Build (or confirm unchanged) every database's indexes, and the example index."""
    unique = list({db.db_id: db for db in dbs}.values())
    jobs: list[Job] = ([None] if examples else []) + unique
    if not jobs:
        return []
    reports: list[BuildReport] = []
    with Progress(
        TextColumn("[bold]index[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),  # stdout is for results (`ask --json` prints only JSON there)
        disable=not progress,
        transient=False,
    ) as bar:
        task = bar.add_task("checking fingerprints", total=len(jobs))
        stale: list[Job] = []
        for job in jobs:
            report = unchanged_report(job, settings)
            if report is None:
                stale.append(job)
            else:
                reports.append(report)
                bar.update(task, advance=1)
        waiting = [_name(job) for job in stale]
        if stale:
            # Each build takes seconds to minutes: the bar names what is being built, and a line
            # per finished build stays above it (the only output where stderr is a log file).
            bar.update(task, description=f"building {', '.join(waiting)}")
            for report in EXECUTORS[settings.executor](stale, settings):
                reports.append(report)
                waiting.remove(_name(report))
                if progress:
                    bar.console.print(
                        f"index {_name(report)}: {report.status} in {report.seconds:.0f} s",
                        highlight=False,
                    )
                bar.update(
                    task,
                    advance=1,
                    description=f"building {', '.join(waiting)}" if waiting else "done",
                )
    order = {None if job is None else job.db_id: i for i, job in enumerate(jobs)}
    return sorted(
        reports, key=lambda r: order.get(None if r.kind == "examples" else r.name, len(order))
    )
