import polars as pl
import pytest
import ray

from eval.sweep.config import SweepConfig
from eval.sweep.driver import run_sweep
from eval.sweep.errors import SweepInterrupted
from eval.sweep.session import ray_session
from eval.sweep.records import QuestionRecord, records_to_table
from eval.sweep.store import RunStore
from eval.sweep.worker import SweepWorker, WorkerSettings

pytestmark = pytest.mark.ray

CONFIG = SweepConfig(workers=1, worker_num_cpus=0.25, in_flight=4, flush_every=2, progress=False, ves_iterations=1)
COMPARED = ["task_id", "position", "sql", "ex_bird", "ex_spider", "candidates", "prompt_tokens", "degraded"]


@pytest.fixture(scope="module")
def local_ray():
    with ray_session(CONFIG.ray):
        yield


def sweep(tmp_path, name, tasks, pipeline, fakes, config=CONFIG, **kwargs):
    store = RunStore.open(tmp_path / name, identity={"config_hash": "x"})
    result = run_sweep(tasks, store=store, factory=pipeline, sandbox=fakes.SqliteExecutor(), config=config, **kwargs)
    return result, store


async def in_process(tasks, pipeline, fakes) -> pl.DataFrame:
    """The same questions through the worker directly, without Ray: the reference output."""
    worker = SweepWorker(pipeline, fakes.SqliteExecutor(), WorkerSettings(question_timeout_s=5, ves_iterations=1))
    out = await worker({"position": list(range(len(tasks))), "task": [t.model_dump_json() for t in tasks]})
    return pl.from_arrow(records_to_table([QuestionRecord.model_validate_json(r) for r in out["record"]]))


def test_sweep_answers_every_question_once_in_benchmark_order(local_ray, tmp_path, clinic_db, fakes):
    tasks = fakes.make_tasks(clinic_db, 12)
    result, store = sweep(tmp_path, "run", tasks, fakes.ScriptedPipeline(), fakes)
    frame = store.compact()
    assert (result.total, result.answered, result.resumed) == (12, 12, 0)
    assert frame.get_column("task_id").to_list() == [t.task_id for t in tasks]
    assert frame.get_column("ex_bird").to_list() == [i % 2 == 0 for i in range(12)]
    assert set(frame.get_column("node_id")) == {ray.get_runtime_context().get_node_id()}
    again, _ = sweep(tmp_path, "run", tasks, fakes.ScriptedPipeline(), fakes)
    assert (again.answered, again.resumed) == (0, 12)


async def test_interrupted_sweep_resumes_to_the_in_process_predictions(local_ray, tmp_path, clinic_db, fakes):
    tasks = fakes.make_tasks(clinic_db, 12)
    reference = await in_process(tasks, fakes.ScriptedPipeline(), fakes)

    seen = []

    def interrupt(record):
        seen.append(record.task_id)
        if len(seen) == 5:
            raise KeyboardInterrupt

    with pytest.raises(SweepInterrupted, match="rerun") as info:
        sweep(tmp_path, "resumed", tasks, fakes.ScriptedPipeline(), fakes, on_record=interrupt)
    assert info.value.done == 5
    store = RunStore.open(tmp_path / "resumed", identity={"config_hash": "x"})
    assert store.finished_ids() == set(seen)  # everything seen was flushed, nothing else

    result, store = sweep(tmp_path, "resumed", tasks, fakes.ScriptedPipeline(), fakes)
    assert (result.resumed, result.answered) == (5, 7)
    assert store.compact().select(COMPARED).equals(reference.select(COMPARED))


def test_a_crashed_worker_is_restarted_and_its_question_retried(local_ray, tmp_path, clinic_db, fakes):
    tasks = fakes.make_tasks(clinic_db, 8)
    pipeline = fakes.ScriptedPipeline(crash="fake:3", marker_dir=str(tmp_path))
    result, store = sweep(tmp_path, "run", tasks, pipeline, fakes)
    assert (tmp_path / "crashed").exists()  # the worker process really died once
    frame = store.compact()
    assert frame.get_column("task_id").to_list() == [t.task_id for t in tasks]
    assert not frame.get_column("degraded").any()
    assert frame.filter(frame["task_id"] == "fake:3").get_column("ex_bird").to_list() == [False]


def test_hung_questions_time_out_as_degraded_without_stalling(local_ray, tmp_path, clinic_db, fakes):
    tasks = fakes.make_tasks(clinic_db, 4)
    config = CONFIG.model_copy(update={"question_timeout_s": 1.0})
    result, store = sweep(tmp_path, "run", tasks, fakes.ScriptedPipeline(hang="fake:2"), fakes, config=config)
    frame = store.compact()
    assert frame.get_column("degraded").to_list() == [False, False, True, False]
