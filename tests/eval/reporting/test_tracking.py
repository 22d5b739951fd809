from contextlib import contextmanager
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from eval.reporting.tracking import (
    TASK_ID_TAG,
    ExperimentNotFound,
    RunLog,
    experiment_runs,
    log_run,
    log_traces,
)
from pipelines.trace import AgentEvent, ReasoningTrace


@pytest.fixture(scope="module")
def uri(tmp_path_factory) -> str:
    """One store for the module: creating an MLflow SQLite schema takes seconds."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow')}/mlflow.db"


def test_a_run_logs_params_metrics_and_artifacts_beside_the_database(uri, tmp_path):
    report = tmp_path / "report.md"
    report.write_text("# hi")
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "t1.jsonl").write_text("{}\n")
    tracked = log_run(
        RunLog(
            tracking_uri=uri,
            experiment="logged",
            run_name="full",
            run_key="k1",
            params={"scaling.k_icl": "2"},
            metrics={"ex_bird": 0.5, "pass_at_1": 0.4},
            artifacts={"report": (str(report),), "traces": (str(traces),)},
        )
    )
    run = MlflowClient(uri).get_run(tracked.run_id)
    assert run.data.params == {"scaling.k_icl": "2"}
    assert run.data.metrics == {"ex_bird": 0.5, "pass_at_1": 0.4}
    assert run.info.status == "FINISHED" and run.info.run_name == "full"
    artifact_root = Path(tracked.artifact_uri.removeprefix("file://"))
    assert artifact_root.is_relative_to(Path(uri.removeprefix("sqlite:///")).parent / "mlartifacts")
    assert (artifact_root / "report" / "report.md").read_text() == "# hi"
    assert (artifact_root / "traces" / "t1.jsonl").exists()


def test_the_same_run_key_updates_one_run(uri):
    first = log_run(
        RunLog(
            tracking_uri=uri,
            experiment="exp",
            run_name="full",
            run_key="k",
            metrics={"ex_bird": 0.3},
        )
    )
    again = log_run(
        RunLog(
            tracking_uri=uri,
            experiment="exp",
            run_name="full",
            run_key="k",
            metrics={"ex_bird": 0.6},
        )
    )
    other = log_run(
        RunLog(
            tracking_uri=uri,
            experiment="exp",
            run_name="no_icl",
            run_key="k2",
            metrics={"ex_bird": 0.2},
        )
    )
    assert first.run_id == again.run_id != other.run_id
    runs = experiment_runs(uri, "exp")
    assert sorted(runs.get_column("run_name").to_list()) == ["full", "no_icl"]
    assert runs.filter(runs["run_name"] == "full").get_column("ex_bird").to_list() == [0.6]


def test_unknown_experiment_is_a_clear_error(uri):
    with pytest.raises(ExperimentNotFound, match="nope"):
        experiment_runs(uri, "nope")


@contextmanager
def tracking_uri(uri):
    """``mlflow.search_traces`` reads the global tracking URI."""
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(None)


def traced(task_id, sql, events=0):
    return ReasoningTrace(
        task_id=task_id,
        question=f"question {task_id}",
        db_id="music",
        started_unix_s=1.7e9,
        chosen_sql=sql,
        latency_s=2.0,
        events=tuple(
            AgentEvent(
                name=f"l2.call{i}",
                surface="cognitive" if i % 2 == 0 else "operational",
                task_id=task_id,
                start_unix_s=1.7e9 + i * 0.5,
                duration_s=0.25,
                ok=i != 1,
                attributes={"gen_ai.usage.input_tokens": 10 + i, "gen_ai.request.model": None},
            )
            for i in range(events)
        ),
    )


def test_traces_reach_the_run_once_and_a_changed_one_replaces_the_old(uri):
    tracked = log_run(RunLog(tracking_uri=uri, experiment="traced", run_name="r", run_key="t"))
    first = [traced("q:0", "SELECT 1", events=3), traced("q:1", "")]
    assert log_traces(tracked, first, {"q:0": "first_wave"}) == 2
    assert not mlflow.is_tracking_uri_set()  # the global tracking URI is put back

    def logged():
        with tracking_uri(uri):
            found = mlflow.search_traces(
                locations=[tracked.experiment_id], run_id=tracked.run_id, return_type="list"
            )
        return {t.info.tags[TASK_ID_TAG]: t for t in found}

    found = logged()
    assert sorted(found) == ["q:0", "q:1"]
    spans = found["q:0"].data.spans
    root = next(s for s in spans if s.parent_id is None)
    assert len(spans) == 4 and root.name == "task q:0"
    assert root.attributes["scale_analytics.chosen_sql"] == "SELECT 1"
    assert root.attributes["scale_analytics.answered_by"] == "first_wave"
    assert root.inputs == {"question": "question q:0", "db_id": "music"}
    assert root.start_time_ns == int(1.7e9 * 1e9) and root.end_time_ns == int((1.7e9 + 2) * 1e9)
    failed = next(s for s in spans if s.name == "l2.call1")
    assert (failed.status.status_code, failed.span_type) == ("ERROR", "TOOL")
    assert failed.attributes["gen_ai.usage.input_tokens"] == 11
    assert found["q:1"].info.state == "ERROR" and len(found["q:1"].data.spans) == 1

    assert log_traces(tracked, first) == 0  # a resumed sweep writes nothing twice
    assert log_traces(tracked, [traced("q:1", "SELECT 2"), first[0]]) == 1  # q:1 answered again
    found = logged()
    assert sorted(found) == ["q:0", "q:1"]
    [root] = found["q:1"].data.spans
    assert root.attributes["scale_analytics.chosen_sql"] == "SELECT 2"


def test_a_new_backend_is_created_without_info_lines_on_stderr(tmp_path, capfd):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    log_run(RunLog(tracking_uri=uri, experiment="quiet", run_name="r", run_key="k"))
    assert "INFO" not in capfd.readouterr().err
