"""One configuration end to end on a tiny Spider layout, with a scripted pipeline."""

import asyncio
import json
import sys
import time
from contextlib import contextmanager

import mlflow
import polars as pl
import pytest
import ray.cloudpickle
from mlflow.tracking import MlflowClient

from core.config import load_config
from core.types import Usage
from eval.experiments import Configuration
from eval.loaders import load_benchmark
from eval.reporting.tracking import TASK_ID_TAG
from eval.run import run_configuration
from eval.sweep.config import RayInitSettings
from eval.sweep.session import ray_session
from pipelines.contracts import CandidateSQL, ChosenSetting, Prediction, Task
from pipelines.sandbox import Sandbox
from pipelines.trace import AgentEvent, JsonlTraceSink, TraceRecorder

pytestmark = pytest.mark.ray
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class LazySandbox:
    """The real sandbox, created in whichever process first uses it."""

    def __init__(self):
        self._sandbox = None

    async def execute(self, sql, db, **kwargs):
        self._sandbox = self._sandbox or Sandbox(timeout_s=5)
        return await self._sandbox.aexecute(sql, db)


class GoldOnEvenQuestions:
    def __init__(self, sandbox):
        self.sandbox = sandbox

    def __call__(self):
        return self

    async def answer(self, task: Task) -> Prediction:
        await asyncio.sleep(0.01)
        index = int(task.task_id.rsplit(":", 1)[1])
        sql = task.gold_sql if index % 2 == 0 else "SELECT 'wrong'"
        result = await self.sandbox.execute(sql, task.db)
        return Prediction(
            task_id=task.task_id,
            sql=sql,
            candidates=(CandidateSQL(sql=sql, producer="p", exec_result=result),),
            usage=Usage(calls=1, prompt_tokens=50, completion_tokens=5),
            chosen=(ChosenSetting(name="sample_rows", value=len(task.db.db_id)),),
        )

    async def aclose(self):
        pass


@contextmanager
def scripted_services(cfg, sweep, storage):
    sandbox = LazySandbox()
    yield GoldOnEvenQuestions(sandbox), sandbox


class TracedGoldOnEvenQuestions(GoldOnEvenQuestions):
    """Also traces each question, as the pipelines do: two agent calls, then the answer."""

    def __init__(self, sandbox, trace_dir):
        super().__init__(sandbox)
        self.trace_dir = trace_dir

    def __call__(self):
        self.sink = JsonlTraceSink(f"{self.trace_dir}/worker")
        return self

    async def answer(self, task: Task) -> Prediction:
        recorder = TraceRecorder(task.task_id, task.question, task.db.db_id)
        for name, surface in (("l2.generator", "cognitive"), ("l2.sandbox", "operational")):
            recorder.event(
                AgentEvent(
                    name=name,
                    surface=surface,
                    task_id=task.task_id,
                    start_unix_s=time.time(),
                    duration_s=0.01,
                    ok=True,
                )
            )
        prediction = await super().answer(task)
        prediction = prediction.model_copy(
            update={"answered_by": "first_wave", "trace_path": self.sink.location(task.task_id)}
        )
        self.sink.write(recorder.freeze(prediction))
        return prediction


@contextmanager
def traced_services(cfg, sweep, storage):
    sandbox = LazySandbox()
    yield TracedGoldOnEvenQuestions(sandbox, storage.traces), sandbox


@pytest.fixture(scope="module")
def local_ray():
    with ray_session(RayInitSettings()):
        yield


def configure(tiny_spider, tmp_path, *extra, label="scripted"):
    overrides = [
        "benchmark=spider_dev",
        f"benchmark.data_dir={tiny_spider}",
        f"paths.runs={tmp_path / 'runs'}",
        "experiment.name=unit",
        "++sweep.progress=false",
        "++sweep.ves_iterations=1",
        f"pipeline.index.root={tmp_path / 'indexes'}",
        "pipeline.index.auto_build=false",
        *extra,
    ]
    return Configuration.of(label, overrides, load_config(overrides))


def test_a_configuration_runs_exports_reports_logs_and_resumes(local_ray, tiny_spider, tmp_path):
    cfg = configure(tiny_spider, tmp_path)
    benchmark = load_benchmark(cfg.benchmark)
    outcome = run_configuration(cfg, benchmark, services=scripted_services)
    run_dir = tmp_path / "runs" / "unit" / f"scripted-{cfg.identity}"
    assert outcome.run_dir == str(run_dir)
    assert (outcome.sweep.total, outcome.sweep.answered) == (6, 6)
    # the gold of question 5 fails: reported, not scored; questions 0, 2, 4 are right
    assert (
        outcome.result.metrics()["questions_scored"] == 5
        and outcome.result.metrics()["gold_errors"] == 1
    )
    assert outcome.result.metrics()["ex_bird"] == pytest.approx(3 / 5)
    assert outcome.result.metrics()["skipped"] == 1
    assert [
        json.loads(line)["db_id"] for line in (run_dir / "skipped.jsonl").read_text().splitlines()
    ] == ["absent_db"]
    pred_lines = (run_dir / "exports" / "pred.txt").read_text().splitlines()
    assert len(pred_lines) == 6 and pred_lines[1] == "SELECT 'wrong'"
    assert (run_dir / "report" / "pass_at_k.png").exists()

    client = MlflowClient(str(cfg.tracking_uri))
    run = client.get_run(outcome.tracked.run_id)
    assert run.info.run_name == "scripted"
    assert run.data.params["benchmark.data_dir"] == str(tiny_spider)
    assert run.data.metrics["ex_bird"] == pytest.approx(0.6)
    logged = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"predictions", "report", "config"} <= logged
    assert "predictions/pred.txt" in {
        a.path for a in client.list_artifacts(run.info.run_id, "predictions")
    }
    # retrieval is never silently off: status in the outcome, the report and MLflow
    assert (
        outcome.result.retrieval.status.startswith("retrieval: off (")
        and "auto_build=false" in outcome.result.retrieval.status
    )
    assert (
        run.data.tags["retrieval"] == "off"
        and run.data.tags["retrieval.status"] == outcome.result.retrieval.status
    )
    assert (
        run.data.metrics["retrieval_none_share"] == 1.0
        and run.data.metrics["retrieval_cells_share"] == 0.0
    )
    assert outcome.result.retrieval.status in (run_dir / "report" / "report.md").read_text()
    # what the pipeline chose for each database: in the outcome (the summary) and as MLflow tags
    assert outcome.result.chosen and all(
        v == f"sample_rows={len(db)}" for db, v in outcome.result.chosen.items()
    )
    assert {k: v for k, v in run.data.tags.items() if k.startswith("chosen.")} == {
        f"chosen.{db}": v for db, v in outcome.result.chosen.items()
    }

    again = run_configuration(cfg, benchmark, services=scripted_services)
    assert (again.sweep.resumed, again.sweep.answered) == (6, 0)
    assert again.tracked.run_id == outcome.tracked.run_id
    assert again.result.metrics()["ex_bird"] == outcome.result.metrics()["ex_bird"]


def test_indexes_are_ensured_for_the_databases_of_the_subset_run(local_ray, tiny_spider, tmp_path):
    from pipelines.indexing.builder.ensure import RetrievalStatus

    calls = []

    def ensure(cfg, dbs):
        calls.append(sorted({db.db_id for db in dbs}))
        return RetrievalStatus(
            needed=("cells", "examples"), cells=("music",), examples=True, built=("music",)
        )

    cfg = configure(tiny_spider, tmp_path, "benchmark.limit=2")
    outcome = run_configuration(
        cfg, load_benchmark(cfg.benchmark), services=scripted_services, ensure=ensure
    )
    assert calls == [["music"]]  # the skipped absent_db is not indexed
    assert (
        outcome.result.retrieval.status
        == "retrieval: cells (1/1 databases), examples; built now: music"
    )
    run = MlflowClient(str(cfg.tracking_uri)).get_run(outcome.tracked.run_id)
    assert run.data.tags["retrieval"] == "cells+examples"


def test_the_run_directory_follows_what_is_computed_not_the_resources(tiny_spider, tmp_path):
    base = configure(tiny_spider, tmp_path).identity
    assert configure(tiny_spider, tmp_path, "++sweep.workers=8").identity == base
    # replies replayed at their recorded pace decide as the run that computed them did
    assert configure(tiny_spider, tmp_path, "model.replay_latency=true").identity == base
    assert configure(tiny_spider, tmp_path, "scaling=single_pass").identity != base
    # the cheatsheet's folder lies under paths.runs: whether there is one counts, not where
    moved = configure(tiny_spider, tmp_path, f"pipeline.cheatsheet.root={tmp_path / 'sheets'}")
    assert moved.identity == base
    assert configure(tiny_spider, tmp_path, "pipeline.cheatsheet.root=null").identity != base
    assert configure(tiny_spider, tmp_path, "pipeline.cheatsheet.learn=false").identity != base


def test_the_same_experiment_from_another_checkout_is_the_same_run(tiny_spider, tmp_path):
    def checkout(root, data_dir):
        return configure(
            tiny_spider,
            tmp_path,
            f"paths.cache={root}/.cache",
            f"paths.storage={root}",
            f"benchmark.data_dir={data_dir}",
        ).identity

    one, two = tmp_path / "one", tmp_path / "two"
    here = checkout(one, f"{one}/.cache/spider")
    assert checkout(two, f"{two}/.cache/spider") == here
    assert checkout(two, f"{two}/.cache/other") != here  # another folder of the checkout
    assert checkout(two, tiny_spider) != here  # a folder outside every configured path


def test_prices_are_not_part_of_a_runs_identity_and_a_judge_is(tiny_spider, tmp_path):
    base = configure(tiny_spider, tmp_path).identity
    repriced = configure(tiny_spider, tmp_path, "prices.cpu_hour=9", "prices.reference=gpt-4o-mini")
    assert repriced.model.slots["default"].price.per_hour == pytest.approx(9 * 2)  # 2 threads
    assert repriced.identity == base
    assert configure(tiny_spider, tmp_path, "eval.judge_preview_rows=9").identity == base
    assert configure(tiny_spider, tmp_path, "eval.judge=default").identity != base


def test_a_judged_run_records_each_verdict_or_why_there_is_none(local_ray, tiny_spider, tmp_path):
    cfg = configure(
        tiny_spider,
        tmp_path,
        "model=replay",
        f"model.slots.default.cassette={tmp_path / 'empty.jsonl'}",
        "model.slots.default.record=false",
        "eval.judge=default",
        label="judged",
    )
    outcome = run_configuration(cfg, load_benchmark(cfg.benchmark), services=scripted_services)
    frame = pl.read_parquet(f"{outcome.run_dir}/predictions.parquet").sort("position")
    # the judge in each worker asked the replay model's empty cassette: no verdict, and why
    assert frame.get_column("judge_correct").to_list() == [None] * 6
    assert all("CassetteMiss" in e for e in frame.get_column("judge_error").to_list())
    assert (
        outcome.result.metrics()["judge_verdicts"],
        outcome.result.metrics()["judge_no_verdict"],
    ) == (0, 6)
    assert "## Answer correctness (LLM judge)" in open(outcome.report).read()
    assert outcome.result.costs.reference.name == "gpt-4.1-mini"
    assert "ref_cost_usd_per_question" in outcome.result.metrics()


def test_a_run_grows_with_its_subset_without_recomputing(local_ray, tiny_spider, tmp_path):
    small = configure(tiny_spider, tmp_path, "benchmark.limit=3")
    first = run_configuration(small, load_benchmark(small.benchmark), services=scripted_services)
    assert (first.sweep.total, first.sweep.answered) == (3, 3)
    assert first.result.metrics()["questions"] == 3

    whole = configure(tiny_spider, tmp_path)
    assert whole.identity == small.identity
    grown = run_configuration(whole, load_benchmark(whole.benchmark), services=scripted_services)
    assert grown.run_dir == first.run_dir
    assert (grown.sweep.resumed, grown.sweep.answered) == (3, 3)
    assert grown.result.metrics()["questions"] == 6

    # asking for the small subset again reports on those 3 questions only, from the stored rows
    again = run_configuration(small, load_benchmark(small.benchmark), services=scripted_services)
    assert (again.sweep.resumed, again.sweep.answered) == (3, 0)
    assert (
        again.result.metrics()["questions"] == 3
        and again.result.metrics()["ex_bird"] == first.result.metrics()["ex_bird"]
    )
    assert len((tmp_path / again.run_dir / "exports" / "pred.txt").read_text().splitlines()) == 3


def test_each_answered_question_becomes_one_mlflow_trace_of_its_run(
    local_ray, tiny_spider, tmp_path
):
    untraced = configure(
        tiny_spider, tmp_path, "benchmark.limit=3", "sweep.mlflow_traces=false", label="traced"
    )
    whole = configure(tiny_spider, tmp_path, label="traced")
    uri = str(whole.tracking_uri)

    def logged(outcome):
        mlflow.set_tracking_uri(uri)
        try:
            found = mlflow.search_traces(
                locations=[outcome.tracked.experiment_id],
                run_id=outcome.tracked.run_id,
                return_type="list",
            )
        finally:
            mlflow.set_tracking_uri(None)
        return sorted(found, key=lambda t: t.info.tags[TASK_ID_TAG])

    off = run_configuration(untraced, load_benchmark(untraced.benchmark), services=traced_services)
    assert off.sweep.answered == 3 and logged(off) == []  # sweep.mlflow_traces=false

    grown = run_configuration(whole, load_benchmark(whole.benchmark), services=traced_services)
    assert grown.tracked.run_id == off.tracked.run_id
    traces = logged(grown)  # the 3 answered before are written now too
    assert [t.info.tags[TASK_ID_TAG] for t in traces] == [f"spider_dev:{i}" for i in range(6)]
    for trace in traces:
        assert len(trace.data.spans) == 3  # the question and its two agent calls
        root = next(s for s in trace.data.spans if s.parent_id is None)
        assert root.attributes["scale_analytics.answered_by"] == "first_wave"
    odd = next(s for s in traces[1].data.spans if s.parent_id is None)
    assert odd.attributes["scale_analytics.chosen_sql"] == "SELECT 'wrong'"
    assert trace.info.request_metadata["mlflow.sourceRun"] == grown.tracked.run_id

    # a resume with other sweep settings: the same MLflow run (they are tags, not params)
    wider = configure(tiny_spider, tmp_path, "sweep.in_flight=3", label="traced")
    again = run_configuration(wider, load_benchmark(wider.benchmark), services=traced_services)
    assert again.sweep.resumed == 6 and len(logged(again)) == 6  # a resume duplicates nothing
    assert again.tracked.run_id == grown.tracked.run_id
    run = MlflowClient(uri).get_run(again.tracked.run_id)
    assert run.data.tags["sweep.in_flight"] == "3" and "sweep.in_flight" not in run.data.params
