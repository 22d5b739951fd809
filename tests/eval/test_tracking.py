from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from eval.tracking import ExperimentNotFound, RunLog, experiment_runs, flatten, log_run


@pytest.fixture(scope="module")
def uri(tmp_path_factory) -> str:
    """One store for the module: creating an MLflow SQLite schema takes seconds."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow')}/mlflow.db"


def test_flatten_nests_with_dots():
    flat = flatten({"a": {"b": 1, "c": {"d": [1, 2]}}, "e": None})
    assert flat == {"a.b": "1", "a.c.d": "[1, 2]", "e": "None"}


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
