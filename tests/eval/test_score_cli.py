"""`scale-analytics score` end to end on small benchmarks, in all three predictions formats."""

from __future__ import annotations

import json

import pytest

from eval.score_cli import main
from pipelines.cli import main as dispatcher

# Right for questions 0, 2 (BIRD) and 3 (Spider only); 1 errors; 4 and 5 absent.
SPIDER_LINES = [
    "SELECT count(*) FROM singer\tmusic",
    "SELECT nme FROM singer",
    "SELECT DISTINCT country FROM singer",
    "SELECT age, name FROM singer WHERE age > 26",
]


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_jsonl_predictions_with_report(tiny_spider, tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        json.dumps({"task_id": "spider_dev:0", "sql": "SELECT count(*) FROM singer"})
        + "\n"
        + json.dumps({"index": 1, "sql": "SELECT nme FROM singer"})
        + "\n\n"
    )
    out_file = tmp_path / "out" / "report.json"
    code, out = _run(
        capsys,
        "--benchmark",
        "spider",
        "--data",
        str(tiny_spider),
        "--predictions",
        str(preds),
        "--out",
        str(out_file),
        "--workers",
        "1",
    )
    assert code == 0
    assert "EX (BIRD, set)" in out and "EX (Spider, bag)" in out
    assert "skipped (no database) 1" in out and "gold failures 1" in out
    report = json.loads(out_file.read_text())
    verdicts = {v["index"]: v for v in report["verdicts"]}
    assert (
        verdicts[0]["ex_bird"]
        and verdicts[0]["ex_spider"]
        and verdicts[0]["task_id"] == "spider_dev:0"
    )
    assert not verdicts[1]["ex_bird"] and "nme" in verdicts[1]["error"]
    assert report["missing_predictions"] == 4
    assert report["overall"]["ex_bird"] == pytest.approx(1 / 5)


def test_spider_format_is_positional(tiny_spider, tmp_path, capsys):
    preds = tmp_path / "pred.txt"
    preds.write_text("\n".join(SPIDER_LINES) + "\n")
    out_file = tmp_path / "report.json"
    code, _ = _run(
        capsys,
        "--benchmark",
        "spider",
        "--data",
        str(tiny_spider),
        "--predictions",
        str(preds),
        "--format",
        "spider",
        "--out",
        str(out_file),
        "--workers",
        "2",
    )
    assert code == 0
    report = json.loads(out_file.read_text())
    got = {v["index"]: (v["ex_bird"], v["ex_spider"]) for v in report["verdicts"]}
    assert got == {
        0: (True, True),
        1: (False, False),
        2: (True, False),
        3: (False, True),
        4: (False, False),
        5: (False, False),
    }
    assert report["overall"]["ex_spider"] == pytest.approx(2 / 5)


def test_bird_format_through_the_dispatcher(tiny_bird, tmp_path, capsys):
    preds = tmp_path / "predict_dev.json"
    preds.write_text(
        json.dumps(
            {
                str(i): f"{line.split(chr(9))[0]}\t----- bird -----\tmusic"
                for i, line in enumerate(SPIDER_LINES)
            }
        )
    )
    out_file = tmp_path / "report.json"
    code = dispatcher(
        [
            "score",
            "--benchmark",
            "bird",
            "--data",
            str(tiny_bird),
            "--predictions",
            str(preds),
            "--format",
            "bird",
            "--out",
            str(out_file),
            "--workers",
            "1",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    for level in ("simple", "moderate", "challenging"):
        assert level in out
    report = json.loads(out_file.read_text())
    assert report["overall"]["ex_bird"] == pytest.approx(2 / 5)
    assert {g["group"] for g in report["by_difficulty"]} == {"simple", "moderate", "challenging"}


def test_misaligned_file_and_missing_data_exit_2(tiny_spider, tmp_path, capsys):
    preds = tmp_path / "pred.txt"
    preds.write_text("SELECT 1\tconcert_singer\n")
    code = main(
        [
            "--benchmark",
            "spider",
            "--data",
            str(tiny_spider),
            "--predictions",
            str(preds),
            "--format",
            "spider",
        ]
    )
    assert code == 2
    assert "aligned" in capsys.readouterr().err

    code = main(
        ["--benchmark", "spider", "--data", str(tmp_path / "nowhere"), "--predictions", str(preds)]
    )
    assert code == 2
    assert "not found" in capsys.readouterr().err


def test_r_ves_column_on_request(tiny_spider, tmp_path, capsys):
    preds = tmp_path / "pred.txt"
    preds.write_text("\n".join(SPIDER_LINES) + "\n")
    code, out = _run(
        capsys,
        "--benchmark",
        "spider",
        "--data",
        str(tiny_spider),
        "--predictions",
        str(preds),
        "--format",
        "spider",
        "--workers",
        "1",
        "--ves",
        "2",
    )
    assert code == 0 and "R-VES" in out
