"""Predictions files: the three input formats, their checks, and the official-script export."""

from __future__ import annotations

import json

import pytest

from eval.errors import PredictionsFormatError
from eval.grading.prediction_files import export_official, read_predictions, write_jsonl
from eval.loaders import BenchmarkSpec, load_benchmark


@pytest.fixture
def spider_bench(tiny_spider):
    return load_benchmark(BenchmarkSpec(name="tiny", kind="spider", data_dir=str(tiny_spider)))


@pytest.fixture
def bird_bench(tiny_bird):
    return load_benchmark(
        BenchmarkSpec(name="tb", kind="bird", data_dir=str(tiny_bird), split="mini_dev")
    )


def test_jsonl_round_trip(spider_bench, tmp_path):
    path = tmp_path / "p.jsonl"
    write_jsonl(path, {"tiny:2": "SELECT 2", "tiny:0": "SELECT\n0"})
    assert read_predictions(path, "jsonl", spider_bench) == {2: "SELECT 2", 0: "SELECT\n0"}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"index": 0, "sql": "a"}', '{"task_id": "tiny:0", "sql": "b"}'], "second prediction"),
        (['{"sql": "a"}'], "needs 'task_id' or 'index'"),
        (['{"index": 0}'], "string 'sql'"),
        (["not json"], "not JSON"),
        (['{"task_id": "x:0", "sql": "a"}'], "not from benchmark"),
        (['{"index": 7, "sql": "a"}'], "outside"),
    ],
)
def test_jsonl_errors(spider_bench, tmp_path, lines, message):
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(PredictionsFormatError, match=message):
        read_predictions(path, "jsonl", spider_bench)


def test_spider_lines_are_question_positions(spider_bench, tmp_path):
    path = tmp_path / "pred.txt"
    path.write_text("SELECT 0\tmusic\n\nSELECT 2\n")
    assert read_predictions(path, "spider", spider_bench) == {0: "SELECT 0", 2: "SELECT 2"}
    path.write_text("SELECT 1\n" * 8)
    with pytest.raises(PredictionsFormatError, match="8 lines for 7 questions"):
        read_predictions(path, "spider", spider_bench)


def test_bird_keys_and_db_check(bird_bench, tmp_path):
    path = tmp_path / "predict_dev.json"
    path.write_text(json.dumps({"0": "SELECT 0\t----- bird -----\tmusic", "3": "SELECT 3"}))
    assert read_predictions(path, "bird", bird_bench) == {0: "SELECT 0", 3: "SELECT 3"}
    path.write_text(json.dumps({"1": "SELECT 1\t----- bird -----\tfinancial"}))
    with pytest.raises(PredictionsFormatError, match="financial"):
        read_predictions(path, "bird", bird_bench)
    path.write_text("[]")
    with pytest.raises(PredictionsFormatError, match="JSON object"):
        read_predictions(path, "bird", bird_bench)


def test_missing_file(spider_bench, tmp_path):
    with pytest.raises(PredictionsFormatError, match="not found"):
        read_predictions(tmp_path / "nope.jsonl", "jsonl", spider_bench)


def test_export_for_official_spider_scripts(spider_bench, tmp_path):
    preds = {"tiny:0": "SELECT count(*)\nFROM singer", "tiny:3": "SELECT name, age FROM singer"}
    pred_file, gold_file = export_official(spider_bench, preds, tmp_path / "official")
    pred_lines = pred_file.read_text().splitlines()
    gold_lines = gold_file.read_text().splitlines()
    assert len(pred_lines) == len(gold_lines) == len(spider_bench.tasks)
    assert pred_lines[0] == "SELECT count(*) FROM singer"
    assert pred_lines[1] == "SELECT NULL"  # no prediction: a placeholder keeps lines aligned
    assert gold_lines[1] == "SELECT name FROM singer ORDER BY age DESC, name\tmusic"


def test_export_for_official_bird_scripts_reads_back(bird_bench, tmp_path):
    preds = {t.task_id: t.gold_sql for t in bird_bench.tasks}
    predict, gold, difficulty = export_official(bird_bench, preds, tmp_path / "official")
    assert predict.name == "predict_mini_dev.json"
    assert read_predictions(predict, "bird", bird_bench) == {
        i: t.gold_sql for i, t in enumerate(bird_bench.tasks)
    }
    assert [json.loads(line)["difficulty"] for line in difficulty.read_text().splitlines()] == [
        t.difficulty for t in bird_bench.tasks
    ]
    assert gold.read_text().splitlines()[0] == "SELECT count(*) FROM singer\tmusic"
