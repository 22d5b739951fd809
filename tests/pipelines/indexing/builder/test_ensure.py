"""ensure_indexes: ask/eval/demo build missing L0 indexes once, reuse them, and say when retrieval is off."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import load_config
from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder import runner
from pipelines.indexing.builder.ensure import (
    NOT_AUTO_BUILT,
    RetrievalStatus,
    ensure_indexes,
    retrieval_needs,
)


def config(root: Path, train_files, *extra: str):
    return load_config(
        [
            f"pipeline.index.root={root}",
            f"pipeline.index.examples.train_file={train_files.train_file}",
            f"pipeline.index.examples.tables_file={train_files.tables_file}",
            *extra,
        ]
    )


def no_executor(jobs, settings):
    raise AssertionError(f"an index was built again: {jobs}")


@pytest.mark.usefixtures("embedder")
def test_missing_indexes_are_built_once_then_reused(zoo_db, train_files, tmp_path, monkeypatch):
    cfg = config(
        tmp_path / "indexes",
        train_files,
        "pipeline.index.executor=ray",
        "pipeline.index.force=true",
    )
    first = ensure_indexes(cfg, [zoo_db, zoo_db], progress=False)
    assert first.built == ("spider_train", "zoo")  # local executor, force ignored: built once each
    assert first.sources == ("cells", "examples") and first.label == "cells+examples"
    assert first.summary().startswith("retrieval: cells (1/1 databases), examples; built now:")

    monkeypatch.setitem(runner.EXECUTORS, "local", no_executor)
    monkeypatch.setitem(runner.EXECUTORS, "ray", no_executor)
    second = ensure_indexes(cfg, [zoo_db], progress=False)
    assert second.built == () and second.sources == ("cells", "examples")
    assert second.summary() == "retrieval: cells (1/1 databases), examples"


@pytest.mark.usefixtures("embedder")
def test_missing_example_source_turns_examples_off_without_failing(zoo_db, train_files, tmp_path):
    gone = train_files.model_copy(
        update={"train_file": str(tmp_path / "no-shared" / "train_spider.json")}
    )
    status = ensure_indexes(config(tmp_path / "indexes", gone), [zoo_db], progress=False)
    assert status.sources == ("cells",) and status.built == ("zoo",)
    assert "example source missing" in status.examples_off
    assert "examples off" in status.summary() and "no-shared" in status.summary()


def test_auto_build_off_builds_nothing_and_says_retrieval_off(
    zoo_db, train_files, tmp_path, monkeypatch
):
    monkeypatch.setitem(runner.EXECUTORS, "local", no_executor)
    root = tmp_path / "indexes"
    status = ensure_indexes(config(root, train_files, "pipeline.index.auto_build=false"), [zoo_db])
    assert status.sources == () and status.label == "off"
    assert status.summary().startswith("retrieval: off (")
    assert NOT_AUTO_BUILT in status.summary() and not root.exists()


def test_a_failed_build_turns_that_database_off_with_its_reason(tmp_path, train_files):
    bad = tmp_path / "broken.sqlite"
    bad.write_bytes(b"this is not a database file" * 100)
    cfg = config(tmp_path / "indexes", train_files, "pipeline.understanding.example_k=0")
    status = ensure_indexes(cfg, [DatabaseRef(db_id="broken", path=str(bad))], progress=False)
    assert status.sources == () and set(status.cells_off) == {"broken"}
    assert status.summary().startswith("retrieval: off (cells: broken: ")


def test_single_pass_needs_no_index(zoo_db, train_files, tmp_path):
    cfg = config(tmp_path / "indexes", train_files, "scaling=single_pass")
    assert not retrieval_needs(cfg).cells and not retrieval_needs(cfg).examples
    status = ensure_indexes(cfg, [zoo_db])
    assert status.summary() == "retrieval: off (the single-pass pipeline retrieves nothing)"
    assert not status.needed and not (tmp_path / "indexes").exists()


def test_summary_names_what_is_off_per_source():
    status = RetrievalStatus(
        needed=("cells", "examples"),
        cells=("a",),
        cells_off={"b": "x", "c": "x"},
        examples_off="example source missing: /t.json",
    )
    assert status.summary() == (
        "retrieval: cells (1/3 databases), examples off (cells: b, c: x; examples: example source missing: /t.json)"
    )
