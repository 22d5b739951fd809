"""A sweep on a Ray cluster whose worker node has a disk of its own answers as one machine does.

Two Ray nodes started with ``ray start`` as processes of their own: a head with no CPU for
tasks (the driver's machine) and a worker node with one, so every question is answered there.
The worker node runs in a mount namespace of its own where the driver's disk (``disk/``) is
another, empty directory, as a second machine's disk would be; what both machines see (the
benchmark's data, the code, the shared storage ``shared/``) is visible to both, as a cluster's
synced files and shared filesystem are. The driver builds the L0 indexes, the worker node
answers, and the driver reads the traces back into the run's MLflow run.

The same with the storage on an S3-compatible server (moto's, the ``s3`` fixture) instead of a
shared directory: each node keeps its copy under its own ``paths.cache`` (on its own disk), the
worker fetches the indexes the driver published and publishes each question's trace.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import mlflow
import polars as pl
import pytest
import ray
from omegaconf import OmegaConf
from pyarrow import fs

from core.config import load_config
from eval.experiments import Configuration
from eval.loaders import load_benchmark
from eval.metrics.traces import latest_traces
from eval.run import run_configuration
from eval.sweep.records import QuestionRecord, records_to_table
from eval.sweep.services import ConfiguredPipeline
from eval.sweep.session import LOCAL_ENV
from eval.sweep.storage import SharedStorage
from eval.sweep.worker import SweepWorker, WorkerSettings
from pipelines.sandbox import Sandbox

pytestmark = [pytest.mark.ray, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).parent / "ray"
QUESTIONS = [
    ("How many singers are from France?", "SELECT count(*) FROM singer WHERE country = 'France'"),
    ("Names of singers from Spain.", "SELECT name FROM singer WHERE country = 'Spain'"),
    ("How old is Ann?", "SELECT age FROM singer WHERE name = 'Ann'"),
    ("Average age of singers.", "SELECT avg(age) FROM singer"),
]
TRAIN = [
    ("How many products are red?", "SELECT count(*) FROM product WHERE colour = 'red'"),
    ("Names of products from Chile.", "SELECT name FROM product WHERE origin = 'Chile'"),
    ("Average price of products.", "SELECT avg(price) FROM product"),
]


class LazySandbox:
    """The real sandbox, created in whichever process first uses it."""

    def __init__(self):
        self._sandbox = None

    async def execute(self, sql, db, **kwargs):
        self._sandbox = self._sandbox or Sandbox(timeout_s=5)
        return await self._sandbox.aexecute(sql, db)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _private_mounts() -> list[str] | None:
    """The ``unshare`` prefix that gives a process a mount namespace of its own (as root, or
    mapped to root in a user namespace), or None where this machine allows neither."""
    probe = tempfile.mkdtemp(prefix="sa-probe-")
    for prefix in (["unshare", "--mount", "--propagation", "private"], ["unshare", "-rm"]):
        try:
            done = subprocess.run(
                [*prefix, "sh", "-c", f"mount --bind {probe} {probe}"],
                capture_output=True,
                timeout=10,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            os.rmdir(probe)
            return prefix
    os.rmdir(probe)
    return None


def _node_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True)
    return {
        **os.environ,
        **LOCAL_ENV,
        "HOME": str(home),
        "SCALE_ANALYTICS_CACHE": str(home / ".cache"),  # each node its own cache
        "PYTHONPATH": str(REPO),
    }


def _ray_start(base: Path, *args: str) -> list[str]:
    """``ray start`` on private ports and ``base``'s temp dir (never /tmp/ray: another Ray runs
    on this machine), blocking so that stopping it stops its node."""
    return [
        str(RAY),
        "start",
        *args,
        f"--temp-dir={base / 'ray'}",
        "--node-ip-address=127.0.0.1",
        "--object-store-memory=100000000",
        f"--dashboard-agent-listen-port={_free_port()}",
        f"--metrics-export-port={_free_port()}",
        "--disable-usage-stats",
        "--block",
    ]


def _start(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
    """A ``ray start --block`` in a session of its own: stopped by signalling its group."""
    return subprocess.Popen(
        command,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _stop(node: subprocess.Popen, base: Path) -> None:
    """Stop the node's process group, then any process left that runs under ``base`` (the
    workers its raylet started); never a Ray process of another cluster on the machine."""
    for signum, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(node.pid, signum)
        except ProcessLookupError:
            break
        try:
            node.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(base).encode() in command and int(entry.name) != os.getpid():
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except ProcessLookupError:
                pass


class Cluster:
    def __init__(self, base: Path, address: str, worker_node: str) -> None:
        self.base, self.address, self.worker_node = base, address, worker_node
        self.driver_disk = base / "disk"  # the driver's local disk; the worker node sees another
        self.shared = base / "shared"  # shared storage: the same directory on both nodes
        self.data = base / "data"  # the benchmark and training files, synced to every node


@pytest.fixture(scope="module")
def cluster(s3):  # started first: both nodes get its endpoint and credentials, as a cluster's would
    unshare = _private_mounts()
    if unshare is None:
        pytest.skip("no mount namespace here (unshare --mount, as root or in a user namespace)")
    base = Path(tempfile.mkdtemp(prefix="sa-nodes-", dir="/tmp"))  # short: Ray's socket paths
    for name in ("disk", "worker-disk", "shared", "data"):
        (base / name).mkdir()
    for name, value in LOCAL_ENV.items():
        os.environ.setdefault(name, value)
    port = _free_port()
    head = _start(
        _ray_start(
            base,
            "--head",
            f"--port={port}",
            "--num-cpus=0",  # the driver's machine answers nothing: every question is the worker's
            "--include-dashboard=false",
            f"--ray-client-server-port={_free_port()}",
        ),
        _node_env(base / "head-home"),
        base / "head-home",
    )
    nodes = [head]
    try:
        ray.init(address=f"127.0.0.1:{port}", _node_ip_address="127.0.0.1")  # waits for the GCS
        before = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        # The worker node's disk: at the driver's disk's path, another (empty) directory.
        mount = f'mount --bind {base / "worker-disk"} {base / "disk"} && exec "$@"'
        worker = _start(
            [
                *unshare,
                "sh",
                "-c",
                mount,
                "sh",
                *_ray_start(base, f"--address=127.0.0.1:{port}", "--num-cpus=1"),
            ],
            _node_env(base / "worker-home"),
            base / "worker-home",
        )
        nodes.append(worker)
        deadline = time.monotonic() + 60
        while len(alive := {n["NodeID"] for n in ray.nodes() if n["Alive"]}) < 2:
            assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the worker node did not join within 60 s"
            time.sleep(0.5)
        (worker_node,) = alive - before
        yield Cluster(base, f"127.0.0.1:{port}", worker_node)
    finally:
        ray.shutdown()
        for node in reversed(nodes):
            _stop(node, base)
        shutil.rmtree(base, ignore_errors=True)


def _benchmark(data: Path) -> Path:
    spider = data / "spider"
    (spider / "database" / "music").mkdir(parents=True, exist_ok=True)
    db = spider / "database" / "music" / "music.sqlite"
    if not db.exists():
        with sqlite3.connect(db) as conn:
            conn.executescript(
                "CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INT);"
                "INSERT INTO singer VALUES (1, 'Ann', 'France', 30), (2, 'Bob', 'Spain', 41),"
                " (3, 'Cid', 'Chile', 25);"
            )
        conn.close()
    records = [{"db_id": "music", "question": q, "query": sql} for q, sql in QUESTIONS]
    (spider / "dev.json").write_text(json.dumps(records))
    train = [{"db_id": "shop", "question": q, "query": sql} for q, sql in TRAIN]
    (data / "train.json").write_text(json.dumps(train))
    return spider


def configuration(cluster: Cluster, label: str, *storage: str) -> Configuration:
    overrides = [
        "benchmark=spider_dev",
        f"benchmark.data_dir={_benchmark(cluster.data)}",
        f"experiment.name={label}",
        "model=replay",  # an empty cassette: every model call misses; retrieval is what is seen
        f"model.slots.default.cassette={cluster.data / 'empty.jsonl'}",
        "model.slots.default.record=false",
        f"pipeline.index.examples.train_file={cluster.data / 'train.json'}",
        "pipeline.index.examples.tables_file=null",
        "sweep.sandbox_actors=1",
        "++sweep.progress=false",
        "++sweep.ves_iterations=1",
        *storage,
    ]
    return Configuration.of(label, overrides, load_config(overrides))


def one_process(config: Configuration, traces: Path) -> pl.DataFrame:
    """The same questions answered in this process (one machine), by the same pipeline, from the
    driver's copy of the storage."""
    storage = SharedStorage(storage=str(config.cfg.paths.working), traces=str(traces))
    factory = ConfiguredPipeline(
        OmegaConf.to_container(config.cfg, resolve=True), LazySandbox(), storage
    )
    worker = SweepWorker(
        factory, LazySandbox(), WorkerSettings(question_timeout_s=60, ves_iterations=1)
    )
    tasks = load_benchmark(config.benchmark).tasks
    out = asyncio.run(
        worker({"position": list(range(len(tasks))), "task": [t.model_dump_json() for t in tasks]})
    )
    records = [QuestionRecord.model_validate_json(r) for r in out["record"]]
    return pl.from_arrow(records_to_table(records))


def hits(traces) -> dict[str, tuple]:
    """What retrieval gave each question: its cell values and examples."""
    return {
        t.task_id: (
            tuple((h.table, h.column, h.value) for h in t.context.cell_hits),
            tuple(h.sql for h in t.context.example_hits),
        )
        for t in traces
    }


COMPARED = ["task_id", "sql", "degraded", "degradation_reasons", "error", "retrieval", "ex_bird"]


def answers_as_one_machine(cluster: Cluster, config: Configuration, capsys) -> Path:
    """Run ``config`` on the cluster: every question answered on the worker node, with
    retrieval, its trace in the driver's MLflow run, as one process answers it. Returns the
    run directory."""
    outcome = run_configuration(config, load_benchmark(config.benchmark))
    frame = pl.read_parquet(Path(outcome.run_dir) / "predictions.parquet").sort("position")
    answered = set(frame["task_id"])
    driver_traces = latest_traces(Path(outcome.run_dir, "traces").glob("**/traces.jsonl"), answered)
    mlflow.set_tracking_uri(config.tracking_uri)
    try:
        logged = mlflow.search_traces(
            locations=[outcome.tracked.experiment_id],
            run_id=outcome.tracked.run_id,
            return_type="list",
        )
    finally:
        mlflow.set_tracking_uri(None)
    by_node = frame.group_by("node_id").agg(
        pl.len().alias("tasks"), (pl.col("retrieval").list.len() > 0).sum().alias("retrieved")
    )
    with capsys.disabled():
        print(f"\n[{config.label}] paths.storage={config.cfg.paths.storage}")
        print(outcome.result.retrieval.status)
        for row in by_node.iter_rows(named=True):
            where = "worker node" if row["node_id"] == cluster.worker_node else "head"
            print(f"{where}: {row['tasks']} tasks, retrieval used on {row['retrieved']}")
        print(f"driver: {len(driver_traces)} traces read, {len(logged)} in the MLflow run")

    assert frame.height == len(QUESTIONS)
    assert set(frame["node_id"]) == {cluster.worker_node}  # every question on the worker node
    assert frame["retrieval"].to_list() == [["cells", "examples"]] * len(QUESTIONS)
    assert len(driver_traces) == len(QUESTIONS) and len(logged) == len(QUESTIONS)

    single = one_process(config, cluster.base / config.label / "one-process" / "traces")
    assert frame.select(COMPARED).equals(single.sort("position").select(COMPARED))
    alone = latest_traces(
        (cluster.base / config.label / "one-process").glob("**/traces.jsonl"), answered
    )
    assert hits(driver_traces) == hits(alone)
    return Path(outcome.run_dir)


def test_a_worker_on_another_node_retrieves_traces_and_answers_as_one_machine(cluster, capsys):
    answers_as_one_machine(
        cluster, configuration(cluster, "shared", f"paths.storage={cluster.shared}"), capsys
    )


def test_on_object_storage_a_worker_fetches_the_indexes_publishes_its_traces_as_one_machine(
    cluster, s3, capsys
):
    bucket = s3.bucket()
    config = configuration(
        cluster,
        "s3",
        f"paths.storage=s3://{bucket}/sa",
        f"paths.cache={cluster.driver_disk / 'cache'}",  # on the worker node: its own disk's
    )
    run_dir = answers_as_one_machine(cluster, config, capsys)

    # What the worker node read and wrote lies in its own copy, which the driver never sees...
    copy = Path("storage", "s3", bucket, "sa")
    worker_copy = cluster.base / "worker-disk" / "cache" / copy
    driver_copy = cluster.driver_disk / "cache" / copy
    pointer = Path(".cache", "indexes", "databases", "music", "CURRENT.json")
    assert (worker_copy / pointer).read_bytes() == (driver_copy / pointer).read_bytes()
    relative = run_dir.relative_to(driver_copy)
    assert len(list((worker_copy / relative / "traces").glob("*/*/traces.jsonl"))) == len(QUESTIONS)
    # ...and the run reached the storage: a driver that lost its copy of it resumes from there,
    published = pl.read_parquet(run_dir / "predictions.parquet")
    shutil.rmtree(run_dir)
    outcome = run_configuration(config, load_benchmark(config.benchmark))
    assert (outcome.sweep.resumed, outcome.sweep.answered) == (len(QUESTIONS), 0)
    assert pl.read_parquet(run_dir / "predictions.parquet").equals(published)
    # and so did MLflow's store, with the run in it.
    filesystem, key = fs.FileSystem.from_uri(f"s3://{bucket}/sa/runs/mlflow.db")
    stored = cluster.base / "stored-mlflow.db"
    fs.copy_files(key, str(stored), source_filesystem=filesystem)
    with closing(sqlite3.connect(stored)) as db:
        runs = db.execute(
            "SELECT count(*) FROM runs WHERE run_uuid = ?", (outcome.tracked.run_id,)
        ).fetchone()
    assert runs == (1,)


def test_a_worker_whose_node_cannot_reach_the_storage_fails_its_questions_naming_the_path(
    cluster, caplog
):
    # The storage on the driver's own disk (as by default: the clone), which the worker node lacks.
    config = configuration(cluster, "local", f"paths.storage={cluster.driver_disk}")
    outcome = run_configuration(config, load_benchmark(config.benchmark))
    frame = pl.read_parquet(Path(outcome.run_dir) / "predictions.parquet")
    pointer = cluster.driver_disk / ".cache" / "indexes" / "databases" / "music" / "CURRENT.json"
    assert frame["degradation_reasons"].to_list() == [["storage_unreachable"]] * len(QUESTIONS)
    assert set(frame["error"]) == {
        f"StorageUnreachable: node {cluster.worker_node} cannot reach {pointer} on the run's "
        f"storage (paths.storage={cluster.driver_disk}): mount that storage at the same path on "
        "every node, or set paths.storage to storage every node reaches"
    }
    assert (frame["retrieval"].list.len() == 0).all()  # failed, never answered without retrieval
    assert f"{len(QUESTIONS)} of {len(QUESTIONS)} questions were not answered" in caplog.text
