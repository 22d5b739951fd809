import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from eval.sweep.errors import RunDirConflict, RunDirLocked
from eval.sweep.records import RECORD_SCHEMA, CandidateRecord, QuestionRecord, records_to_table
from eval.sweep.store import DamagedPart, RunStore, read_answers, read_predictions
from pipelines.contracts import SkippedTask


def record(i: int, sql: str = "SELECT 1", ex: bool | None = True) -> QuestionRecord:
    return QuestionRecord(
        task_id=f"t:{i}",
        position=i,
        benchmark="b",
        db_id="db",
        question=f"q{i}",
        sql=sql,
        ex_bird=ex,
        candidates=(CandidateRecord(sql=sql, producer="p", hash="h", correct_bird=ex),),
    )


def test_schema_matches_record_fields():
    assert RECORD_SCHEMA.names == list(QuestionRecord.model_fields)


def test_parts_are_read_back_in_benchmark_order(tmp_path: Path):
    store = RunStore.open(tmp_path / "run", identity={"config_hash": "a"})
    with store.writer(flush_every=2) as out:
        for i in (3, 0, 2, 1, 4):
            out.add(record(i))
    assert len(list(store.parts_dir.glob("part-*.parquet"))) == 3  # 2 + 2 + the flush on exit
    frame = store.read()
    assert frame.get_column("task_id").to_list() == [f"t:{i}" for i in range(5)]
    assert set(store.read()["task_id"]) == {f"t:{i}" for i in range(5)}
    assert frame.get_column("candidates").to_list()[0][0]["producer"] == "p"


def test_a_row_finished_long_after_the_last_write_is_written_at_once(tmp_path: Path):
    """Slow questions are each saved as they finish: a stop that cannot flush (a hard stop, a
    killed driver) loses none of them."""
    store = RunStore.open(tmp_path / "run", identity={})
    out = store.writer(flush_every=8, flush_within_s=0.05)
    out.add(record(0))
    assert store.read().is_empty()  # buffered: the last write was just now
    time.sleep(0.1)
    out.add(record(1))
    assert store.read().get_column("task_id").to_list() == ["t:0", "t:1"]  # without an exit


def test_the_last_row_written_wins_when_a_question_appears_more_than_once(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    for k in range(12):  # parts once sorted by a random uuid: any of the twelve could win
        store.write_part([record(0, f"SELECT {k}"), record(k + 1)])
    frame = store.read()
    assert frame.height == 13
    assert frame.filter(frame["task_id"] == "t:0").get_column("sql").to_list() == ["SELECT 11"]
    assert [p.name.split("-")[1] for p in store.parts()] == [f"{k:08d}" for k in range(1, 13)]
    assert store.compact().filter(pl.col("task_id") == "t:0").get_column("sql").to_list() == [
        "SELECT 11"
    ]
    store.write_part([record(0, "SELECT 'after compaction'")])  # parts are newer than predictions
    assert store.read().get_column("sql").to_list()[0] == "SELECT 'after compaction'"


def test_a_crash_between_compaction_and_part_removal_reads_the_same_rows(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    for k in range(4):
        store.write_part([record(0, f"SELECT {k}"), record(k + 1, f"SELECT {k}")])
    saved = {p.name: p.read_bytes() for p in store.parts()}
    expected = store.compact()
    for name in sorted(saved)[2:]:  # parts are removed oldest first: the newest two were left
        (store.parts_dir / name).write_bytes(saved[name])
    assert store.read().equals(expected)


def test_parts_of_older_run_directories_count_as_written_first(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    store.write_part([record(0, "SELECT 'numbered'")])
    legacy = store.parts_dir / "part-ffffffffffffffffffffffffffffffff.parquet"
    pq.write_table(records_to_table([record(0, "SELECT 'legacy'")]), legacy)
    assert store.parts()[0] == legacy
    assert store.read().get_column("sql").to_list() == ["SELECT 'numbered'"]


def test_parts_written_before_a_field_existed_read_it_as_null(tmp_path: Path):
    """A part without the floor_construct column and without correct_columns in its candidates
    reads back, both null, beside a part that has them; nothing is set aside as damaged."""
    store = RunStore.open(tmp_path, identity={})
    old_candidate = pa.struct([("sql", pa.string()), ("correct_bird", pa.bool_())])
    old_schema = pa.schema(
        [
            pa.field("candidates", pa.list_(old_candidate)) if f.name == "candidates" else f
            for f in RECORD_SCHEMA
            if f.name != "floor_construct"
        ]
    )
    old = pa.Table.from_pylist([record(0).model_dump()], schema=old_schema)
    pq.write_table(old, store.parts_dir / "part-old.parquet")
    current = record(1).model_copy(update={"floor_construct": "unnest"})
    store.write_part([current])
    frame = store.read()
    assert frame.get_column("floor_construct").to_list() == [None, "unnest"]
    pools = frame.get_column("candidates").to_list()
    assert pools[0][0]["correct_bird"] is True and pools[0][0]["correct_columns"] is None
    assert not (tmp_path / "damaged").exists()


def test_compact_folds_parts_and_keeps_resume_information(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={"config_hash": "a"})
    store.write_part([record(1), record(0)])
    store.write_part([record(2, ex=None)])
    frame = store.compact()
    assert not list(store.parts_dir.glob("*.parquet"))
    assert pq.read_table(store.predictions_path).num_rows == 3
    assert frame.get_column("ex_bird").to_list() == [True, True, None]
    reopened = RunStore.open(tmp_path, identity={"config_hash": "a"})
    assert set(reopened.read()["task_id"]) == {"t:0", "t:1", "t:2"}
    reopened.write_part([record(3)])
    assert reopened.compact().height == 4


def test_reopening_with_another_configuration_is_refused(tmp_path: Path):
    RunStore.open(tmp_path, identity={"config_hash": "a"})
    with pytest.raises(RunDirConflict, match="another configuration"):
        RunStore.open(tmp_path, identity={"config_hash": "b"})


def test_leftover_temp_files_of_a_killed_writer_are_ignored(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    store.write_part([record(0)])
    (store.parts_dir / ".tmp-dead-part-x.parquet").write_bytes(b"PAR1 half written")
    reopened = RunStore.open(tmp_path, identity={})
    assert set(reopened.read()["task_id"]) == {"t:0"}
    assert not list(store.parts_dir.glob(".tmp-*"))


def test_skipped_questions_round_trip(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    skipped = [SkippedTask(task_id="s:1", db_id="wta_1", reason="database file missing")]
    lines = store.write_skipped(skipped).read_text().splitlines()
    assert [SkippedTask.model_validate_json(line) for line in lines] == skipped


# --- one writer, durable parts, damaged parts ---------------------------------------------------

HOLD_LOCK = """
import sys, time
from eval.sweep.store import DamagedPart, RunStore, read_predictions
store = RunStore.open(sys.argv[1], identity={})
print("open", flush=True)
sys.stdin.read()  # hold the run directory until the test closes stdin
"""


def test_a_second_process_writing_the_run_dir_gets_a_clear_error(tmp_path: Path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(
            RunDirLocked, match=rf"in use by another run \(pid {holder.pid} on .*\); wait"
        ):
            RunStore.open(tmp_path, identity={})
    finally:
        holder.communicate("", timeout=60)
    with RunStore.open(tmp_path, identity={}) as store:  # the holder exited: the lock is free
        store.write_part([record(0)])


def test_stores_of_one_process_share_the_lock_and_closing_releases_it(tmp_path: Path):
    import eval.sweep.store as store_module

    first = RunStore.open(tmp_path, identity={})
    second = RunStore.open(tmp_path, identity={})  # the driver and a reader in one process
    key = str(tmp_path.resolve())
    assert store_module._held[key][1] == 2
    second.close()
    second.close()  # closing twice counts once
    assert store_module._held[key][1] == 1
    with pytest.raises(RunDirConflict):
        RunStore.open(tmp_path, identity={"config_hash": "other"})
    assert store_module._held[key][1] == 1  # a refused open gives its share back
    first.close()
    assert key not in store_module._held


def test_parts_and_their_directory_are_fsynced(tmp_path: Path, monkeypatch):
    import eval.sweep.store as store_module

    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(store_module.os, "fsync", spy)
    store = RunStore.open(tmp_path, identity={})
    part = store.write_part([record(0)])
    assert any(
        Path(s).name.endswith(part.name) and ".tmp-" in s for s in synced
    )  # the data, before the rename
    assert synced[-1] == str(store.parts_dir.resolve())  # the rename itself
    synced.clear()
    store.compact()
    assert str(tmp_path.resolve()) in synced and str(store.parts_dir.resolve()) in synced


def test_a_truncated_part_is_set_aside_with_a_warning_and_its_questions_rerun(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    damaged = store.write_part([record(0), record(1)])
    store.write_part([record(2)])
    damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size // 2])  # a copy cut short
    with pytest.warns(DamagedPart, match="unreadable.*run again"):
        assert set(store.read()["task_id"]) == {"t:2"}
    assert not damaged.exists()
    assert [p.name.endswith(damaged.name) for p in (tmp_path / "damaged").iterdir()] == [True]
    store.write_part([record(0), record(1)])  # the rerun answers them again
    assert store.compact().get_column("task_id").to_list() == ["t:0", "t:1", "t:2"]


def test_an_empty_predictions_file_does_not_block_a_resume(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    store.write_part([record(0)])
    store.compact()
    store.predictions_path.write_bytes(b"")
    with pytest.warns(DamagedPart):
        assert set(store.read()["task_id"]) == set()
    store.write_part([record(0)])
    assert store.compact().height == 1


def test_read_predictions_counts_a_retried_question_once_and_changes_nothing(tmp_path: Path):
    store = RunStore.open(tmp_path / "run", identity={})
    store.write_part([record(0, "SELECT 'first'"), record(1)])
    store.compact()
    store.write_part([record(0, "SELECT 'retried'"), record(2)])  # a part beside the compacted file
    damaged = store.write_part([record(3)])
    damaged.write_bytes(damaged.read_bytes()[:10])
    store.close()
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.warns(DamagedPart, match="left out"):
        frame = read_predictions(tmp_path / "run")
    assert frame.get_column("task_id").to_list() == ["t:0", "t:1", "t:2"]
    assert frame.get_column("sql").to_list()[0] == "SELECT 'retried'"
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_one_configurations_answers_in_two_directories_read_as_one(tmp_path: Path):
    first = RunStore.open(tmp_path / "first", identity={})
    first.write_part([record(0, "SELECT 'old'", ex=False), record(1), record(2)])
    first.close()
    again = RunStore.open(tmp_path / "again", identity={})
    again.write_part([record(0, "SELECT 'new'", ex=True), record(5)])
    again.close()

    frame = read_answers(f"{tmp_path / 'first'}+{tmp_path / 'again'}")

    assert frame.get_column("task_id").to_list() == ["t:0", "t:1", "t:2", "t:5"]
    assert frame.row(0, named=True)["sql"] == "SELECT 'new'"  # the later directory's answer
    assert frame.get_column("ex_bird").to_list() == [True, True, True, True]
    assert read_answers([tmp_path / "again", tmp_path / "first"]).row(0, named=True)["sql"] == (
        "SELECT 'old'"
    )
    assert read_answers(tmp_path / "first").equals(read_predictions(tmp_path / "first"))


def test_read_predictions_of_a_directory_without_answers_is_an_error(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="holds no predictions"):
        read_predictions(tmp_path)
