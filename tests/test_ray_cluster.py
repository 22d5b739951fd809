"""A two-node Ray cluster on one machine: pipeline workers spread over both nodes, and the
predictions equal those of the same questions answered in a single process."""

import asyncio
import os
import sqlite3
import sys
import time

import polars as pl
import pytest
import ray
import ray.cloudpickle
from ray.cluster_utils import Cluster

from core.types import Usage
from eval.sweep.config import SweepSettings
from eval.sweep.driver import run_sweep
from eval.sweep.records import QuestionRecord, records_to_table
from eval.sweep.session import LOCAL_ENV
from eval.sweep.store import RunStore
from eval.sweep.worker import SweepWorker, WorkerSettings
from pipelines.contracts import CandidateSQL, DatabaseRef, Prediction, Task
from pipelines.sandbox import Sandbox

pytestmark = pytest.mark.ray
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

QUERIES = [
    "SELECT count(*) FROM t",
    "SELECT v FROM t WHERE v > 2",
    "SELECT max(v) FROM t",
    "SELECT v FROM t ORDER BY v DESC",
]


class LazySandbox:
    def __init__(self):
        self._sandbox = None

    async def execute(self, sql, db, **kwargs):
        self._sandbox = self._sandbox or Sandbox(timeout_s=5)
        return await self._sandbox.aexecute(sql, db)


class DeterministicPipeline:
    """Answers by a fixed rule of the question number, with a two-candidate pool."""

    def __init__(self, delay_s: float = 0.05):
        self.sandbox = LazySandbox()
        self.delay_s = delay_s

    def __call__(self):
        return self

    async def answer(self, task: Task) -> Prediction:
        await asyncio.sleep(self.delay_s)
        index = int(task.task_id.split(":")[1])
        chosen = QUERIES[(index * 7) % len(QUERIES)]
        pool = [chosen, QUERIES[index % len(QUERIES)]]
        candidates = [
            CandidateSQL(
                sql=s, producer=f"c{k}", exec_result=await self.sandbox.execute(s, task.db)
            )
            for k, s in enumerate(pool)
        ]
        return Prediction(
            task_id=task.task_id,
            sql=chosen,
            candidates=tuple(candidates),
            usage=Usage(calls=2, prompt_tokens=index),
        )

    async def aclose(self):
        pass


@pytest.fixture(scope="module")
def two_nodes():
    for name, value in LOCAL_ENV.items():
        os.environ.setdefault(name, value)
    # Starting a head right after another module's Ray session has shut down occasionally times
    # out waiting for the GCS on a loaded 2-core machine (seen once in CI): one more attempt,
    # never `ray stop`, which would stop every Ray on the machine (a parallel test's, a run's).
    for attempt in (1, 2):
        try:
            cluster = Cluster(
                initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
            )
            break
        except RuntimeError:
            if attempt == 2:
                raise
            time.sleep(5)
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1),(2),(3),(4),(5);")
    con.close()
    db = DatabaseRef(db_id="t", path=str(path))
    return [
        Task(task_id=f"q:{i}", question=f"q{i}", db=db, gold_sql=QUERIES[i % len(QUERIES)])
        for i in range(12)
    ]


COMPARED = ["task_id", "sql", "ex_bird", "ex_spider", "candidates", "prompt_tokens"]


def test_workers_spread_over_both_nodes_and_answers_match_one_process(two_nodes, tasks, tmp_path):
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    # 0.6 CPU per worker on 1-CPU nodes: two workers cannot share a node. Ray Data hands questions
    # to whichever worker is up, so each question takes long enough (12 × 0.5 s, one at a time)
    # that the first worker cannot finish them all before the other node's worker has started.
    config = SweepSettings(
        workers=2, worker_num_cpus=0.6, in_flight=1, progress=False, ves_iterations=1
    )
    store = RunStore.open(tmp_path / "run", identity={})
    result = run_sweep(
        tasks,
        store=store,
        factory=DeterministicPipeline(delay_s=0.5),
        sandbox=LazySandbox(),
        config=config,
    )
    assert result.answered == len(tasks)
    frame = store.compact()
    assert frame.get_column("node_id").n_unique() == 2

    settings = WorkerSettings(question_timeout_s=10, ves_iterations=1)
    worker = SweepWorker(DeterministicPipeline(), LazySandbox(), settings)
    out = asyncio.run(
        worker({"position": list(range(len(tasks))), "task": [t.model_dump_json() for t in tasks]})
    )
    single = pl.from_arrow(
        records_to_table([QuestionRecord.model_validate_json(r) for r in out["record"]])
    )
    assert frame.select(COMPARED).equals(single.select(COMPARED))
    assert frame.get_column("ex_bird").sum() not in (0, len(tasks))  # a mix of right and wrong


def test_the_cluster_launcher_config_is_valid_for_ray_and_matches_the_cluster_sweep_shape():
    import yaml
    from ray.autoscaler._private.util import prepare_config, validate_config

    from core.config import REPO_ROOT, load_config
    from eval.sweep.config import SweepSettings

    config = prepare_config(yaml.safe_load((REPO_ROOT / "ray_cluster.yaml").read_text()))
    validate_config(config)  # Ray's own schema check (raises on an unknown or missing field)
    nodes = config["available_node_types"]
    gpus_per_node = nodes["gpu"]["resources"]["GPU"]
    model = load_config(["model=omnisql-32b"]).model
    serving = sum(s.num_replicas * s.tensor_parallel_size for s in model.slots.values())
    assert serving <= gpus_per_node  # one GPU node holds every 32B slot with tensor parallelism
    assert any("[gpu]" in c for c in nodes["gpu"]["worker_setup_commands"])
    in_defaults = "sweep" in load_config(
        []
    )  # the group may or may not be in conf/config.yaml's defaults
    sweep = SweepSettings.from_cfg(
        load_config(["sweep=cluster" if in_defaults else "+sweep=cluster"])
    )
    cpus = sum(n["resources"]["CPU"] * n.get("min_workers", 1) for n in nodes.values())
    assert sweep.ray.address == "auto"
    assert (
        sweep.workers * sweep.worker_num_cpus + sweep.sandbox_actors * sweep.sandbox_num_cpus
        <= cpus
    )


def test_the_cluster_keeps_its_dashboard_private_and_requires_a_token():
    import yaml

    from core.config import REPO_ROOT

    text = (REPO_ROOT / "ray_cluster.yaml").read_text()
    config = yaml.safe_load(text)
    head = " ".join(config["head_start_ray_commands"])
    assert (
        "0.0.0.0" not in head and "--dashboard-host=127.0.0.1" in head
    )  # reached through an SSH tunnel
    for command in (head, " ".join(config["worker_start_ray_commands"])):
        assert "RAY_AUTH_MODE=token" in command
    assert (
        "--env RAY_AUTH_MODE=token" in config["docker"]["run_options"]
    )  # drivers run by `ray exec` too
    assert (
        config["file_mounts"]["~/.ray/auth_token"] == "~/.ray/auth_token"
    )  # one token on every node
    assert "ray get-auth-token --generate" in text and "ray dashboard ray_cluster.yaml" in text
    assert "RAY_AUTH_MODE=disabled" not in text


def test_joining_a_cluster_keeps_its_auth_mode(monkeypatch):
    from eval.sweep.config import RayInitSettings
    from eval.sweep.session import ray_session

    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.setattr(
        ray, "is_initialized", lambda: True
    )  # no Ray is started: only the env is set
    monkeypatch.setattr("eval.sweep.session._quiet_ray_data", lambda: None)
    with ray_session(RayInitSettings(address="auto")):
        assert "RAY_AUTH_MODE" not in os.environ
    with ray_session(RayInitSettings()):
        assert os.environ["RAY_AUTH_MODE"] == "disabled"
