from pathlib import Path

import pyarrow.parquet as pq
import pytest

from eval.sweep.errors import RunDirConflict
from eval.sweep.records import RECORD_SCHEMA, CandidateRecord, QuestionRecord
from eval.sweep.store import RunStore
from pipelines.contracts import SkippedTask


def record(i: int, sql: str = "SELECT 1", ex: bool | None = True) -> QuestionRecord:
    return QuestionRecord(
        task_id=f"t:{i}", position=i, benchmark="b", db_id="db", question=f"q{i}", sql=sql, ex_bird=ex,
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
    assert store.finished_ids() == {f"t:{i}" for i in range(5)}
    assert frame.get_column("candidates").to_list()[0][0]["producer"] == "p"


def test_first_row_wins_when_a_question_appears_twice(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    store.write_part([record(0, "SELECT 'first'")])
    store.write_part([record(0, "SELECT 'second'"), record(1)])
    frame = store.read()
    assert frame.height == 2
    # parts sort by name (random), so only assert one of them survived, once
    assert frame.filter(frame["task_id"] == "t:0").height == 1


def test_compact_folds_parts_and_keeps_resume_information(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={"config_hash": "a"})
    store.write_part([record(1), record(0)])
    store.write_part([record(2, ex=None)])
    frame = store.compact()
    assert not list(store.parts_dir.glob("*.parquet"))
    assert pq.read_table(store.predictions_path).num_rows == 3
    assert frame.get_column("ex_bird").to_list() == [True, True, None]
    reopened = RunStore.open(tmp_path, identity={"config_hash": "a"})
    assert reopened.finished_ids() == {"t:0", "t:1", "t:2"}
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
    assert reopened.finished_ids() == {"t:0"}
    assert not list(store.parts_dir.glob(".tmp-*"))


def test_skipped_questions_round_trip(tmp_path: Path):
    store = RunStore.open(tmp_path, identity={})
    skipped = [SkippedTask(task_id="s:1", db_id="wta_1", reason="database file missing")]
    store.write_skipped(skipped)
    assert store.read_skipped() == skipped
