from __future__ import annotations

import os
import sqlite3

import pytest

from pipelines.indexing.builder import runner
from pipelines.indexing.builder.runner import build_all

pytestmark = pytest.mark.usefixtures("embedder")


def test_local_runner_builds_each_database_once_and_examples_first(zoo_db, numbers_db, settings):
    reports = build_all([zoo_db, numbers_db, zoo_db], settings, progress=False)
    assert [(r.kind, r.name, r.status) for r in reports] == [
        ("examples", "spider_train", "built"),
        ("database", "zoo", "built"),
        ("database", "numbers", "built"),
    ]
    assert {r.status for r in build_all([zoo_db, numbers_db], settings, progress=False)} == {
        "unchanged"
    }


def test_each_finished_build_says_so_in_a_line(zoo_db, settings, capsys):
    build_all([zoo_db], settings)
    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith("index examples: built in ") for line in lines)
    assert any(line.startswith("index zoo: built in ") for line in lines)


def test_nothing_to_do_starts_no_executor(zoo_db, settings, monkeypatch):
    build_all([zoo_db], settings, progress=False)

    def no_executor(jobs, settings):
        raise AssertionError(f"executor started for {jobs}")

    monkeypatch.setitem(runner.EXECUTORS, "ray", no_executor)
    again = build_all([zoo_db], settings.model_copy(update={"executor": "ray"}), progress=False)
    assert [(r.name, r.status) for r in again] == [
        ("spider_train", "unchanged"),
        ("zoo", "unchanged"),
    ]
    assert again[1].counts["values"] > 0 and again[1].bytes_on_disk > 0


@pytest.fixture
def ray_cluster(monkeypatch):
    """One local Ray for the test's builds (the runner leaves a Ray it did not start running)."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.ray
def test_ray_runner_rebuilds_only_the_modified_database(zoo_db, numbers_db, settings, ray_cluster):
    ray_settings = settings.model_copy(update={"executor": "ray", "workers": 1, "worker_cpus": 0.5})
    first = build_all([zoo_db, numbers_db], ray_settings, progress=False)
    assert [r.status for r in first] == ["built", "built", "built"]
    with sqlite3.connect(numbers_db.path) as conn:
        conn.execute("INSERT INTO reading VALUES (3, 4.5, 300)")
    conn.close()
    second = build_all([zoo_db, numbers_db], ray_settings, progress=False)
    assert [(r.name, r.status) for r in second] == [
        ("spider_train", "unchanged"),
        ("zoo", "unchanged"),
        ("numbers", "built"),
    ]


@pytest.mark.parametrize(("local_threads", "expected"), [(3, 3), (0, os.cpu_count())])
def test_a_local_build_embeds_on_local_threads_or_every_core(
    zoo_db, settings, monkeypatch, local_threads, expected
):
    from pipelines.indexing import embedder

    seen: list[int] = []
    real = embedder.embedding_threads

    def recording(threads: int):
        seen.append(threads)
        return real(threads)

    monkeypatch.setattr(embedder, "embedding_threads", recording)
    reports = build_all(
        [zoo_db], settings.model_copy(update={"local_threads": local_threads}), progress=False
    )
    assert seen == [expected]
    assert {r.status for r in reports} == {"built"}
