"""score_predictions: verdicts under both semantics, gold failures, missing predictions,
per-difficulty groups, parallel == sequential, and gold-vs-gold on a Spider dev slice."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import load_config
from eval.errors import PredictionsFormatError
from eval.grading.scoring import NO_PREDICTION, score_predictions
from eval.loaders import BenchmarkSpec, load_benchmark


@pytest.fixture
def bench(tiny_spider):
    return load_benchmark(BenchmarkSpec(name="tiny", kind="spider", data_dir=str(tiny_spider)))


PREDICTIONS = {
    "tiny:0": "SELECT count(name) FROM singer",  # same number, other SQL: right
    1: "SELECT name FROM singer ORDER BY age ASC, name",  # same rows, wrong order
    "2": "SELECT DISTINCT country FROM singer",  # same set, lost duplicates
    "tiny:3": "SELECT age, name FROM singer WHERE age > 26",  # columns swapped
    # 4: no prediction
    "tiny:5": "SELECT 1",  # its gold query is broken
}


def test_verdicts_follow_each_semantics(bench):
    report = score_predictions(bench, PREDICTIONS, workers=1)
    verdict = {v.index: v for v in report.verdicts}
    assert (verdict[0].ex_bird, verdict[0].ex_spider) == (True, True)
    assert (verdict[1].ex_bird, verdict[1].ex_spider) == (True, False)  # gold has ORDER BY
    assert (verdict[2].ex_bird, verdict[2].ex_spider) == (True, False)  # bag vs set
    assert (verdict[3].ex_bird, verdict[3].ex_spider) == (False, True)  # column permutation
    assert [verdict[i].ex_columns for i in range(5)] == [True, False, False, True, False]
    assert verdict[4].error == NO_PREDICTION and not verdict[4].ex_bird and verdict[4].sql is None

    # the broken gold query is reported, not counted
    assert [v.index for v in report.gold_failures] == [5]
    assert "no_such_column" in report.gold_failures[0].gold_error
    assert report.scored == 5
    assert report.overall.count == 5
    assert report.overall.ex_bird == pytest.approx(3 / 5)
    assert report.overall.ex_spider == pytest.approx(2 / 5)
    assert report.overall.ex_columns == pytest.approx(2 / 5)
    assert report.missing_predictions == 1
    assert [s.db_id for s in report.skipped] == ["absent_db"]
    assert sum(g.count for g in report.by_difficulty) == 5
    assert report.overall.r_ves is None


def test_prediction_errors_and_timeouts_are_wrong(bench):
    runaway = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    )
    report = score_predictions(
        bench,
        {0: "SELECT count(*) FROM nowhere", 4: runaway, 1: "DELETE FROM singer"},
        workers=1,
        sandbox_timeout_s=0.5,
    )
    verdict = {v.index: v for v in report.verdicts}
    assert verdict[0].error_kind == "sql_error" and "nowhere" in verdict[0].error
    assert verdict[4].error_kind == "timeout"
    assert verdict[1].error_kind == "read_only_violation"
    assert not any(verdict[i].ex_bird or verdict[i].ex_spider for i in (0, 1, 4))
    assert report.overall.ex_bird == 0.0


def test_parallel_matches_sequential(bench):
    sequential = score_predictions(bench, PREDICTIONS, workers=1)
    parallel = score_predictions(bench, PREDICTIONS, workers=2)
    assert parallel.verdicts == sequential.verdicts
    assert parallel.by_difficulty == sequential.by_difficulty
    assert parallel.workers == 2


def test_r_ves_rewards_only_correct_predictions(bench):
    report = score_predictions(bench, PREDICTIONS, workers=1, ves_iterations=2)
    verdict = {v.index: v for v in report.verdicts}
    assert verdict[0].ves_reward in {0.25, 0.5, 0.75, 1.0, 1.25}
    assert verdict[3].ves_reward == 0.0  # wrong under BIRD semantics
    assert verdict[4].ves_reward is None  # no prediction, never timed
    assert 0 < report.overall.r_ves < 100 * 1.25**0.5


def test_prediction_keys_are_checked(bench):
    with pytest.raises(PredictionsFormatError, match="not from benchmark"):
        score_predictions(bench, {"other:0": "SELECT 1"})
    with pytest.raises(PredictionsFormatError, match="outside"):
        score_predictions(bench, {99: "SELECT 1"})
    with pytest.raises(ValueError):
        score_predictions(bench, {}, workers=0)


def test_predictions_outside_the_subset_are_counted_as_ignored(tiny_spider):
    sub = load_benchmark(
        BenchmarkSpec(name="tiny", kind="spider", data_dir=str(tiny_spider), limit=2)
    )
    report = score_predictions(sub, PREDICTIONS, workers=1)
    assert [v.index for v in report.verdicts] == [0, 1]
    assert report.ignored_predictions == 3


SHARED_SPIDER = Path(load_config().paths.benchmarks) / "spider"


@pytest.mark.skipif(
    not (SHARED_SPIDER / "dev.json").is_file(),
    reason=f"shared Spider data not found at {SHARED_SPIDER} (see ../shared/benchmarks/README.md)",
)
def test_gold_against_itself_is_perfect_on_a_spider_dev_slice():
    # every 12th question whose database exists (81 questions, all 20 databases but wta_1)
    bench = load_benchmark(load_config(["benchmark=spider_dev", "benchmark.stride=12"]).benchmark)
    report = score_predictions(bench, {t.task_id: t.gold_sql for t in bench.tasks}, workers=2)
    assert report.scored == len(bench.tasks) == 81
    assert report.gold_failures == ()
    assert report.overall.ex_bird == report.overall.ex_spider == 1.0
    assert {g.group for g in report.by_difficulty} == {"easy", "medium", "hard", "extra"}
    assert len(report.skipped) == 62


def test_questions_rated_on_sds_are_also_scored_per_bucket(bench):
    assert score_predictions(bench, PREDICTIONS, workers=1).by_sds == ()
    rated = bench.model_copy(
        update={
            "tasks": tuple(t.model_copy(update={"sds": 6 * i}) for i, t in enumerate(bench.tasks))
        }
    )
    report = score_predictions(rated, PREDICTIONS, workers=1)
    # totals 0, 6, 12 | 18 | 24 (and 30, whose gold fails: counted nowhere)
    assert [(g.group, g.count) for g in report.by_sds] == [
        ("SDS 0-12", 3),
        ("SDS 13-18", 1),
        ("SDS 19-35", 1),
    ]
    assert report.by_sds[0].ex_bird == pytest.approx(1.0)  # questions 0, 1, 2 are right
    assert report.by_sds[2].ex_bird == 0.0  # question 4 has no prediction
    assert [v.sds for v in report.verdicts] == [0, 6, 12, 18, 24, 30]


def test_questions_that_name_a_construct_are_also_scored_per_construct(bench):
    assert score_predictions(bench, PREDICTIONS, workers=1).by_construct == ()
    named = ("unnest", None, "unnest", "hierarchy", "hierarchy", "unnest")
    floor = bench.model_copy(
        update={
            "tasks": tuple(
                t.model_copy(update={"floor_construct": c}) for t, c in zip(bench.tasks, named)
            )
        }
    )
    report = score_predictions(floor, PREDICTIONS, workers=1)
    # question 5's gold fails: counted nowhere; 3 (columns swapped) and 4 (none) are wrong
    assert [(g.group, g.count) for g in report.by_construct] == [
        ("construct hierarchy", 2),
        ("construct unnest", 2),
    ]
    assert [g.ex_bird for g in report.by_construct] == [0.0, 1.0]
    assert [v.floor_construct for v in report.verdicts] == list(named)
