import os
import signal
import subprocess
import sys
import time

import polars as pl
import pytest
import ray

from eval.sweep.config import SweepSettings
from eval.sweep.driver import run_sweep
from eval.sweep.errors import SweepFailed, SweepInterrupted, UnknownRerun
from eval.sweep.records import QuestionRecord, records_to_table
from eval.sweep.session import ray_session
from eval.sweep.store import RunStore
from eval.sweep.worker import SweepWorker, WorkerSettings

pytestmark = pytest.mark.ray

CONFIG = SweepSettings(
    workers=1, worker_num_cpus=0.25, in_flight=4, flush_every=2, progress=False, ves_iterations=1
)
COMPARED = [
    "task_id",
    "position",
    "sql",
    "ex_bird",
    "ex_spider",
    "candidates",
    "prompt_tokens",
    "degraded",
]


@pytest.fixture(scope="module")
def local_ray():
    with ray_session(CONFIG.ray):
        yield


def sweep(tmp_path, name, tasks, pipeline, fakes, config=CONFIG, **kwargs):
    store = RunStore.open(tmp_path / name, identity={"config_hash": "x"})
    result = run_sweep(
        tasks,
        store=store,
        factory=pipeline,
        sandbox=fakes.SQLiteExecutor(),
        config=config,
        **kwargs,
    )
    return result, store


async def in_process(tasks, pipeline, fakes) -> pl.DataFrame:
    """The same questions through the worker directly, without Ray: the reference output."""
    worker = SweepWorker(
        pipeline, fakes.SQLiteExecutor(), WorkerSettings(question_timeout_s=5, ves_iterations=1)
    )
    out = await worker(
        {"position": list(range(len(tasks))), "task": [t.model_dump_json() for t in tasks]}
    )
    return pl.from_arrow(
        records_to_table([QuestionRecord.model_validate_json(r) for r in out["record"]])
    )


def test_sweep_answers_every_question_once_in_order_and_times_out_hung_ones(
    local_ray, tmp_path, clinic_db, fakes
):
    tasks = fakes.make_tasks(clinic_db, 12)
    config = CONFIG.model_copy(update={"question_timeout_s": 1.5})
    result, store = sweep(
        tmp_path, "run", tasks, fakes.ScriptedPipeline(hang="fake:5"), fakes, config=config
    )
    frame = store.compact()
    assert (result.total, result.answered, result.resumed) == (12, 12, 0)
    assert frame.get_column("task_id").to_list() == [t.task_id for t in tasks]
    assert frame.get_column("degraded").to_list() == [i == 5 for i in range(12)]
    assert frame.get_column("ex_bird").to_list() == [i % 2 == 0 for i in range(12)]
    assert set(frame.get_column("node_id")) == {ray.get_runtime_context().get_node_id()}
    again, _ = sweep(tmp_path, "run", tasks, fakes.ScriptedPipeline(), fakes)
    assert (again.answered, again.resumed) == (0, 12)  # a timed-out row is final by default
    retry = CONFIG.model_copy(update={"retry": "degraded"})
    redone, store = sweep(tmp_path, "run", tasks, fakes.ScriptedPipeline(), fakes, config=retry)
    assert (redone.answered, redone.retried, redone.resumed) == (1, 1, 11)
    frame = store.compact()
    assert frame.height == 12 and not frame.get_column("degraded").any()  # the new row replaced it
    assert frame.filter(pl.col("task_id") == "fake:5").get_column("sql").to_list() == [fakes.WRONG]
    # sweep.rerun answers the questions it names again, whatever their rows hold
    rerun = CONFIG.model_copy(update={"rerun": ("fake:2", "fake:7")})
    changed, store = sweep(
        tmp_path, "run", tasks, fakes.ScriptedPipeline(fail="fake:2"), fakes, config=rerun
    )
    assert (changed.answered, changed.retried, changed.resumed) == (2, 2, 10)
    frame = store.compact()
    assert frame.height == 12
    assert frame.filter(pl.col("degraded")).get_column("task_id").to_list() == ["fake:2"]
    typo = CONFIG.model_copy(update={"rerun": ("fake:2", "fake:99")})
    with pytest.raises(UnknownRerun, match="fake:99"):
        sweep(tmp_path, "run", tasks, fakes.ScriptedPipeline(), fakes, config=typo)


def test_ctrl_c_keeps_every_finished_question(local_ray, tmp_path, clinic_db, fakes):
    seen = []

    def interrupt(record):
        seen.append(record.task_id)
        if len(seen) == 5:
            raise KeyboardInterrupt

    with pytest.raises(SweepInterrupted, match="rerun") as info:
        sweep(
            tmp_path,
            "run",
            fakes.make_tasks(clinic_db, 12),
            fakes.ScriptedPipeline(),
            fakes,
            on_record=interrupt,
        )
    assert info.value.done == 5
    store = RunStore.open(tmp_path / "run", identity={"config_hash": "x"})
    assert set(store.read()["task_id"]) == set(seen)  # buffered rows were flushed on the way out


def test_a_crashed_worker_is_restarted_and_its_question_retried(
    local_ray, tmp_path, clinic_db, fakes
):
    tasks = fakes.make_tasks(clinic_db, 8)
    pipeline = fakes.ScriptedPipeline(crash="fake:3", marker_dir=str(tmp_path))
    result, store = sweep(tmp_path, "run", tasks, pipeline, fakes)
    assert (tmp_path / "crashed").exists()  # the worker process really died once
    frame = store.compact()
    assert frame.get_column("task_id").to_list() == [t.task_id for t in tasks]
    assert not frame.get_column("degraded").any()
    assert frame.filter(frame["task_id"] == "fake:3").get_column("ex_bird").to_list() == [False]


def test_a_worker_crashing_past_its_retries_stops_the_sweep_with_a_resumable_error(
    local_ray, tmp_path, clinic_db, fakes
):
    tasks = fakes.make_tasks(clinic_db, 6)
    config = CONFIG.model_copy(update={"max_restarts": 1, "max_task_retries": 1, "flush_every": 1})
    with pytest.raises(SweepFailed, match="rerun the same configuration") as info:
        sweep(tmp_path, "run", tasks, fakes.ScriptedPipeline(crash="fake:4"), fakes, config=config)
    store = RunStore.open(tmp_path / "run", identity={"config_hash": "x"})
    done = set(store.read()["task_id"])
    assert "fake:4" not in done and len(done) == info.value.done


CHILD_SWEEP = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("sweep_fakes", sys.argv[1])
fakes = importlib.util.module_from_spec(spec)
sys.modules["sweep_fakes"] = fakes
spec.loader.exec_module(fakes)
from pipelines.contracts import DatabaseRef
from eval.sweep.config import SweepSettings
from eval.sweep.driver import run_sweep
from eval.sweep.session import ray_session
from eval.sweep.store import RunStore
config = SweepSettings(workers=1, in_flight=1, flush_every=1, progress=False, ves_iterations=1)
tasks = fakes.make_tasks(DatabaseRef(db_id="clinic", path=sys.argv[3]), 12)
with ray_session(config.ray):
    run_sweep(tasks, store=RunStore.open(sys.argv[2], identity={"config_hash": "x"}),
              factory=fakes.ScriptedPipeline(delay_s=0.5), sandbox=fakes.SQLiteExecutor(), config=config)
"""


async def test_a_sweep_killed_with_sigkill_resumes_without_loss_or_duplicates(
    local_ray, tmp_path, clinic_db, fakes
):
    run_dir = tmp_path / "killed"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_SWEEP, fakes.__file__, str(run_dir), clinic_db.path],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while len(list((run_dir / "parts").glob("part-*.parquet"))) < 3:
        assert child.poll() is None and time.monotonic() < deadline, (
            "the child sweep never got going"
        )
        time.sleep(0.2)
    child.send_signal(signal.SIGKILL)
    child.wait()

    store = RunStore.open(run_dir, identity={"config_hash": "x"})
    done = set(store.read()["task_id"])
    assert 3 <= len(done) < 12
    tasks = fakes.make_tasks(clinic_db, 12)
    result, store = sweep(tmp_path, "killed", tasks, fakes.ScriptedPipeline(), fakes)
    assert (result.resumed, result.answered) == (len(done), 12 - len(done))
    reference = await in_process(tasks, fakes.ScriptedPipeline(), fakes)
    assert store.compact().select(COMPARED).equals(reference.select(COMPARED))
