"""`scale-analytics score` end to end on small benchmarks, in all three predictions formats."""

from __future__ import annotations

import json

import pytest

from core.cli import main as dispatcher
from eval.cli.score_cli import main, parse_args

# Right for questions 0, 2 (BIRD) and 3 (Spider only); 1 errors; 4 and 5 absent.
SPIDER_LINES = [
    "SELECT count(*) FROM singer\tmusic",
    "SELECT nme FROM singer",
    "SELECT DISTINCT country FROM singer",
    "SELECT age, name FROM singer WHERE age > 26",
]

# One line per question of the file (6 on `music`, 1 on a missing database): blank = no prediction.
FULL_SPIDER_LINES = SPIDER_LINES + ["", "", ""]


BENCHMARKS = {"spider": "spider_dev", "bird": "bird_minidev"}


def _args(benchmark: str, data, predictions) -> tuple[str, ...]:
    """The predictions file, then the overrides naming a benchmark and its folder."""
    return (str(predictions), f"benchmark={BENCHMARKS[benchmark]}", f"benchmark.data_dir={data}")


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
    argv = [
        *_args("spider", tiny_spider, preds),
        "--out",
        str(out_file),
        "--workers",
        "1",
    ]
    assert main(argv) == 2 and not out_file.exists()  # 4 of the 6 questions have no prediction
    assert "no prediction for 4 of the 6 questions" in capsys.readouterr().err
    code, out = _run(capsys, *argv, "--partial")
    assert code == 0
    assert "EX (BIRD, set)" in out and "EX (Spider, bag)" in out
    assert "PARTIAL" in out and "4 without a prediction" in out
    assert "skipped (no database) 1" in out and "gold failures 0" in out
    report = json.loads(out_file.read_text())
    verdicts = {v["index"]: v for v in report["verdicts"]}
    assert (
        verdicts[0]["ex_bird"]
        and verdicts[0]["ex_spider"]
        and verdicts[0]["task_id"] == "spider_dev:0"
    )
    assert not verdicts[1]["ex_bird"] and "nme" in verdicts[1]["error"]
    assert (report["partial"], report["left_out"], report["missing_predictions"]) == (True, 4, 0)
    assert report["overall"]["ex_bird"] == pytest.approx(1 / 2)


def test_spider_format_is_positional(tiny_spider, tmp_path, capsys):
    preds = tmp_path / "pred.txt"
    preds.write_text("\n".join(FULL_SPIDER_LINES) + "\n")
    out_file = tmp_path / "report.json"
    code, _ = _run(
        capsys,
        *_args("spider", tiny_spider, preds),
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


@pytest.mark.parametrize("first", ["predictions", "overrides"])
def test_predictions_positional_and_benchmark_as_hydra_overrides(
    tiny_spider, tmp_path, capsys, first
):
    preds = tmp_path / "pred.txt"
    preds.write_text("\n".join(FULL_SPIDER_LINES) + "\n")
    out_file = tmp_path / "report.json"
    overrides = ["benchmark=spider_dev", f"benchmark.data_dir={tiny_spider}", "benchmark.split=dev"]
    argv = [str(preds), *overrides] if first == "predictions" else [*overrides, str(preds)]
    code = dispatcher(
        ["score", *argv, "--format", "spider", "--out", str(out_file), "--workers", "1"]
    )
    assert code == 0, capsys.readouterr().err
    report = json.loads(out_file.read_text())
    assert (report["benchmark"], report["split"]) == ("spider_dev", "dev")
    assert report["overall"]["ex_spider"] == pytest.approx(2 / 5)


def test_the_benchmark_is_set_by_overrides_only(capsys):
    args, overrides = parse_args(
        ["benchmark=bird_minidev", "p.json", "--format", "bird", "benchmark.split=mini_dev"]
    )
    assert (str(args.predictions), args.format) == ("p.json", "bird")
    assert overrides == ["benchmark=bird_minidev", "benchmark.split=mini_dev"]
    for flag in ("--benchmark", "--split", "--data", "--predictions"):  # no second way to say it
        with pytest.raises(SystemExit) as exited:
            parse_args(["p.json", flag, "x"])
        assert exited.value.code == 2 and flag in capsys.readouterr().err


def test_no_predictions_file_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["benchmark=spider_dev"])
    assert exited.value.code == 2 and "the predictions file is missing" in capsys.readouterr().err


def test_bird_format_through_the_dispatcher(tiny_bird, tmp_path, capsys):
    preds = tmp_path / "predict_dev.json"
    preds.write_text(
        json.dumps(
            {
                str(i): f"{line.split(chr(9))[0]}\t----- bird -----\tmusic"
                for i, line in enumerate(SPIDER_LINES + ["SELECT 0", "SELECT 0"])
            }
        )
    )
    out_file = tmp_path / "report.json"
    code = dispatcher(
        [
            "score",
            *_args("bird", tiny_bird, preds),
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
            *_args("spider", tiny_spider, preds),
            "--format",
            "spider",
        ]
    )
    assert code == 2
    assert "aligned" in capsys.readouterr().err

    code = main([*_args("spider", tmp_path / "nowhere", preds), "--format", "spider"])
    assert code == 2
    assert "not found" in capsys.readouterr().err


def test_r_ves_column_on_request(tiny_spider, tmp_path, capsys):
    preds = tmp_path / "pred.txt"
    preds.write_text("\n".join(FULL_SPIDER_LINES) + "\n")
    code, out = _run(
        capsys,
        *_args("spider", tiny_spider, preds),
        "--format",
        "spider",
        "--workers",
        "1",
        "--ves",
        "2",
    )
    assert code == 0 and "R-VES" in out


# --- refused inputs: one line on stderr, exit 2, nothing scored ---------------------------------


def _refused(capsys, *argv: str) -> str:
    code = dispatcher(["score", *argv])
    printed = capsys.readouterr()
    assert code == 2 and "Traceback" not in printed.err + printed.out
    lines = printed.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scale-analytics score: "), printed.err
    return lines[0]


@pytest.fixture
def no_scoring(monkeypatch):
    """Refusals happen before any query runs."""
    import eval.cli.score_cli

    def refuse(*args, **kwargs):
        raise AssertionError("scored although the input was refused")

    monkeypatch.setattr(eval.cli.score_cli, "score_predictions", refuse)


def test_a_short_or_shifted_spider_file_is_refused_unless_partial(
    tiny_spider, tmp_path, capsys, no_scoring
):
    preds = tmp_path / "pred.txt"
    args = [
        *_args("spider", tiny_spider, preds),
        "--format",
        "spider",
    ]
    preds.write_text("\n".join(SPIDER_LINES) + "\n")  # 4 lines for 7 questions
    assert "4 lines for the 7 questions" in _refused(capsys, *args)
    preds.write_text("\n".join(FULL_SPIDER_LINES[1:]) + "\n")  # a line lost: every answer shifted
    assert "6 lines for the 7 questions" in _refused(capsys, *args)
    preds.write_text("\n".join(["SELECT 1", *FULL_SPIDER_LINES]) + "\n")  # a line too many
    assert "8 lines for 7 questions" in _refused(capsys, *args, "--partial")


def test_a_shifted_file_with_database_ids_is_refused(tiny_spider, tmp_path, capsys, no_scoring):
    preds = tmp_path / "pred.txt"
    lines = [f"SELECT {i}\t{'absent_db' if i == 6 else 'music'}" for i in range(7)]
    preds.write_text("\n".join(["SELECT 1\tmusic", *lines[:-1]]) + "\n")  # same length, one down
    line = _refused(
        capsys,
        *_args("spider", tiny_spider, preds),
        "--format",
        "spider",
    )
    assert "names database 'music' but question 6 is on 'absent_db'" in line


def test_a_spider_file_naming_the_wrong_databases_is_refused(
    tiny_spider, tmp_path, capsys, no_scoring
):
    preds = tmp_path / "pred.txt"
    preds.write_text("".join(f"SELECT 1\t{'absent_db' if i == 2 else 'music'}\n" for i in range(7)))
    line = _refused(
        capsys,
        *_args("spider", tiny_spider, preds),
        "--format",
        "spider",
    )
    assert "names database 'absent_db' but question 2 is on 'music'" in line


def test_an_empty_file_is_refused_even_with_partial(tiny_spider, tmp_path, capsys, no_scoring):
    preds = tmp_path / "preds.jsonl"
    preds.write_text("")
    line = _refused(
        capsys,
        *_args("spider", tiny_spider, preds),
        "--partial",
    )
    assert "no predictions" in line


def test_jsonl_database_ids_are_checked(tiny_spider, tmp_path, capsys, no_scoring):
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"index": 0, "sql": "SELECT 1", "db_id": "concert_singer"}) + "\n")
    line = _refused(
        capsys,
        *_args("spider", tiny_spider, preds),
        "--partial",
    )
    assert "names database 'concert_singer' but question 0 is on 'music'" in line


@pytest.mark.parametrize("where", ["under_a_file", "a_directory"])
def test_an_unwritable_out_is_refused_before_scoring(
    tiny_spider, tmp_path, capsys, no_scoring, where
):
    preds = tmp_path / "pred.txt"
    preds.write_text("\n".join(FULL_SPIDER_LINES) + "\n")
    (tmp_path / "a_file").write_text("x")
    out = tmp_path / "a_file" / "report.json" if where == "under_a_file" else tmp_path
    line = _refused(
        capsys,
        *_args("spider", tiny_spider, preds),
        "--format",
        "spider",
        "--out",
        str(out),
    )
    assert f"cannot write --out {out}" in line


@pytest.mark.parametrize(
    "argv",
    [
        ["{tmp}/nope.jsonl"],  # a missing file
        ["{tmp}"],  # a directory
        ["{tmp}/binary.jsonl"],  # not text
        ["{tmp}/pred.txt", "benchmark.data_dir={tmp}/nowhere"],  # a missing benchmark
        ["{tmp}/pred.txt", "benchmark.split=no_such_split"],
    ],
)
def test_bad_paths_and_files_are_one_line(tiny_spider, tmp_path, capsys, argv):
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00 not utf-8")
    (tmp_path / "pred.txt").write_text("\n".join(FULL_SPIDER_LINES) + "\n")
    argv = [a.format(tmp=tmp_path) for a in argv]
    if not any(a.startswith("benchmark.data_dir=") for a in argv):
        argv.append(f"benchmark.data_dir={tiny_spider}")
    _refused(capsys, "benchmark=spider_dev", *argv)


def test_partial_scores_a_short_spider_file_and_says_so(tiny_spider, tmp_path, capsys):
    preds = tmp_path / "pred.txt"
    preds.write_text("\n".join(SPIDER_LINES) + "\n")
    code, out = _run(
        capsys,
        *_args("spider", tiny_spider, preds),
        "--format",
        "spider",
        "--partial",
        "--workers",
        "1",
    )
    assert (
        code == 0 and "PARTIAL: --partial scored the 4 questions the file answers; 2 without" in out
    )
