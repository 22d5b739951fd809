"""The run's storage on an S3-compatible server (the ``s3`` fixture: moto's server mode on a
localhost port): what the driver publishes, a worker on another disk fetches, and what it cannot
reach it names."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pyarrow import fs

from eval.metrics.traces import latest_traces
from eval.sweep.errors import OutsideStorage, StorageUnreachable
from eval.sweep.storage import SharedStorage
from pipelines.indexing.store import Manifest, VersionedStore
from pipelines.trace import ReasoningTrace

INDEX = Path(".cache", "indexes", "databases", "music")


def build(working: Path, fingerprint: str, files: dict[str, str]) -> Path:
    """An index of ``files`` published in ``working``'s local store, as a build leaves it;
    returns its manifest (CURRENT.json)."""
    store = VersionedStore(working / ".cache" / "indexes", "databases", "music")
    version = store.new_version(fingerprint)
    for name, text in files.items():
        (version / name).parent.mkdir(parents=True, exist_ok=True)
        (version / name).write_text(text)
    with store.lock(10):
        store.publish(
            version, Manifest(name="music", version=version.name, fingerprint=fingerprint)
        )
    return store.pointer


def nodes(root: str, tmp_path: Path) -> tuple[SharedStorage, SharedStorage]:
    """The driver's view of the storage and a worker's, each with a working copy of its own."""
    driver = SharedStorage(storage=root, working=str(tmp_path / "driver"))
    pointer = str(tmp_path / "driver" / INDEX / "CURRENT.json")
    worker_pointer = str(tmp_path / "worker" / INDEX / "CURRENT.json")
    return (
        driver.model_copy(update={"indexes": (pointer,)}),
        driver.model_copy(
            update={"working": str(tmp_path / "worker"), "indexes": (worker_pointer,)}
        ),
    )


def remote_versions(root: str) -> set[str]:
    filesystem, key = fs.FileSystem.from_uri(f"{root}/{INDEX.as_posix()}")
    return {
        i.base_name
        for i in filesystem.get_file_info(fs.FileSelector(key))
        if i.base_name.startswith("v-")
    }


def test_a_worker_fetches_the_index_the_driver_published_and_follows_a_rebuild(s3_root, tmp_path):
    driver, worker = nodes(s3_root, tmp_path)
    build(tmp_path / "driver", "a" * 16, {"schema.json": "{}", "lance/data/0.lance": "cells v1"})
    driver.publish_indexes()
    worker.check()
    local = VersionedStore(tmp_path / "worker" / ".cache" / "indexes", "databases", "music")
    first = local.current()
    assert (
        first is not None
        and (local.base / first.version / "lance/data/0.lance").read_text() == "cells v1"
    )
    assert local.pointer.read_bytes() == (tmp_path / "driver" / INDEX / "CURRENT.json").read_bytes()

    worker.check()  # unchanged: nothing fetched again
    assert local.current() == first

    build(tmp_path / "driver", "b" * 16, {"schema.json": "{}", "lance/data/0.lance": "cells v2"})
    driver.publish_indexes()
    build(tmp_path / "driver", "c" * 16, {"schema.json": "{}", "lance/data/0.lance": "cells v3"})
    driver.publish_indexes()
    worker.check()
    third = local.current()
    assert third is not None and third.fingerprint == "c" * 16
    assert (local.base / third.version / "lance/data/0.lance").read_text() == "cells v3"
    # kept as a local build keeps them: the live version and the one it replaced
    assert {p.name for p in local.base.glob("v-*")} == {first.version, third.version}
    driver_store = VersionedStore(tmp_path / "driver" / ".cache" / "indexes", "databases", "music")
    assert remote_versions(s3_root) == {
        p.name for p in driver_store.base.glob("v-*")
    }  # the last two


def test_a_worker_names_the_index_the_storage_does_not_hold(s3_root, tmp_path):
    _, worker = nodes(s3_root, tmp_path)
    with pytest.raises(StorageUnreachable) as caught:
        worker.check()
    assert str(caught.value) == (
        f"node local cannot reach {s3_root}/.cache/indexes/databases/music/CURRENT.json on the "
        f"run's storage (paths.storage={s3_root}): not published there; give every node the "
        "storage's endpoint and credentials (for s3://: AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, "
        "AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION)"
    )


def test_a_worker_that_cannot_reach_the_server_names_the_path_and_why(s3, tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = f"s3://nowhere/sa?endpoint_override=127.0.0.1:{port}&scheme=http&region=us-east-1"
    _, worker = nodes(root, tmp_path)
    with pytest.raises(StorageUnreachable) as caught:
        worker.check()
    message = str(caught.value)
    assert message.startswith(
        "node local cannot reach s3://nowhere/sa/.cache/indexes/databases/music/CURRENT.json on "
        f"the run's storage (paths.storage={root}): "
    )
    assert "Could not connect to server" in message


def test_each_trace_a_worker_writes_reaches_the_driver(s3_root, tmp_path):
    driver, worker = nodes(s3_root, tmp_path)
    run = Path("runs", "demo", "run-1", "traces")
    (sink,) = worker.trace_sinks(str(tmp_path / "worker" / run / "w1"))
    for n in range(3):
        sink.write(ReasoningTrace(task_id=f"spider_dev:{n}", question=f"q{n}", db_id="music"))
    where = sink.location("spider_dev:2")
    assert (
        where
        == f"{tmp_path / 'worker' / run / 'w1' / 'spider_dev_2' / 'traces.jsonl'}#spider_dev:2"
    )

    driver.fetch(tmp_path / "driver" / run)
    traces = latest_traces(
        (tmp_path / "driver" / run).glob("**/traces.jsonl"), {"spider_dev:0", "spider_dev:2"}
    )
    assert sorted(t.question for t in traces) == ["q0", "q2"]
    # The trace's location names the same place in the driver's copy.
    assert Path(
        where.replace(str(tmp_path / "worker"), str(tmp_path / "driver")).split("#")[0]
    ).is_file()


def test_a_run_directory_is_published_as_it_is_and_fetched_by_a_driver_that_lacks_it(
    s3_root, tmp_path
):
    driver, _ = nodes(s3_root, tmp_path)
    run = tmp_path / "driver" / "runs" / "demo" / "run-1"
    (run / "parts").mkdir(parents=True)
    for name in (
        "run.json",
        "config.yaml",
        "parts/part-1.parquet",
        "parts/part-2.parquet",
        ".lock",
    ):
        (run / name).write_text(name)
    driver.publish(run)
    (run / "parts" / "part-1.parquet").unlink()  # compacted
    (run / "predictions.parquet").write_text("all")
    driver.publish(run)

    elsewhere = driver.model_copy(update={"working": str(tmp_path / "other")})
    copy = tmp_path / "other" / "runs" / "demo" / "run-1"
    elsewhere.fetch(copy)
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == [
        "config.yaml",
        "parts/part-2.parquet",
        "predictions.parquet",
        "run.json",
    ]  # not the lock, not the part compacted away
    assert (copy / "predictions.parquet").read_text() == "all"


def test_a_path_outside_the_working_copy_is_refused_naming_both(s3_root, tmp_path):
    driver, _ = nodes(s3_root, tmp_path)
    with pytest.raises(OutsideStorage, match=r"paths.working=.*driver\): keep paths.indexes"):
        driver.publish(tmp_path / "elsewhere")


def test_a_directory_storage_is_used_in_place(tmp_path):
    pointer = build(tmp_path, "a" * 16, {"schema.json": "{}"})
    storage = SharedStorage(
        storage=str(tmp_path), indexes=(str(pointer),), directories=(str(tmp_path),)
    )
    storage.check()
    storage.publish_indexes()
    storage.publish(tmp_path)
    storage.fetch(tmp_path / "runs")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cache"]  # nothing added
    missing = SharedStorage(storage=str(tmp_path), directories=(str(tmp_path / "traces"),))
    with pytest.raises(StorageUnreachable, match="mount that storage at the same path"):
        missing.check()


def test_a_new_driver_adopts_the_published_indexes_it_has_no_version_of(s3_root, tmp_path):
    driver, _ = nodes(s3_root, tmp_path)
    build(tmp_path / "driver", "a" * 16, {"schema.json": "{}"})
    driver.publish_indexes()
    examples = tmp_path / "fresh" / ".cache" / "indexes" / "examples" / "spider_train"
    fresh = driver.model_copy(update={"working": str(tmp_path / "fresh")})
    fresh.adopt_indexes(
        [str(tmp_path / "fresh" / INDEX / "CURRENT.json"), str(examples / "CURRENT.json")]
    )
    adopted = VersionedStore(tmp_path / "fresh" / ".cache" / "indexes", "databases", "music")
    assert adopted.current() is not None and adopted.current().fingerprint == "a" * 16
    assert not examples.exists()  # not published: left to the build

    own = build(tmp_path / "fresh", "b" * 16, {"schema.json": "{}"})  # its own, newer build
    fresh.adopt_indexes([str(own)])
    assert adopted.current().fingerprint == "b" * 16  # a copy it has is never replaced
