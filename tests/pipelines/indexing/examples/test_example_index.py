from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.indexing.builder.build import build_examples
from pipelines.indexing.errors import IndexNotBuilt
from pipelines.indexing.examples.example_index import ExampleRetriever
from pipelines.indexing.examples.example_source import load_examples
from pipelines.indexing.examples.question_skeleton import SchemaWords, skeletonise
from pipelines.indexing.settings import ExampleSettings

pytestmark = pytest.mark.usefixtures("embedder")


def test_skeletons_mask_gold_literals_and_schema_words(train_files):
    examples = {
        e["question"]: e for e in load_examples(train_files.train_file, train_files.tables_file)
    }
    ford = examples['What is the name of the car made by "Ford"?']
    assert "ford" not in ford["skeleton"].lower() and "[VALUE]" in ford["skeleton"]
    assert (
        examples["How many pets are there?"]["skeleton"]
        == examples["How many cars are there?"]["skeleton"]
    )
    assert ford["sql_skeleton"] == "select _ from _ where _ = ?"


def test_build_search_and_cross_database_exclusion(settings):
    assert build_examples(settings).status == "built"
    assert build_examples(settings).status == "unchanged"
    retriever = ExampleRetriever(settings.root)
    query = skeletonise("How many songs are there?", SchemaWords.from_names(["songs"], ["title"]))
    hits = retriever.search(query, k=2)
    assert {h.db_id for h in hits} == {"pets", "cars"} and hits[0].score == pytest.approx(
        1.0, abs=1e-4
    )
    crossed = retriever.search(query, k=5, exclude_db="pets")
    assert "pets" not in {h.db_id for h in crossed} and crossed[0].db_id == "cars"
    assert len(crossed) == 3  # all five but the excluded database's two


def test_threshold_is_a_maximum_squared_distance(settings):
    build_examples(settings)
    retriever = ExampleRetriever(settings.root)
    every = retriever.search("how many [TABLE] are there ?", k=5)
    kept = retriever.search("how many [TABLE] are there ?", k=5, threshold=0.01)
    assert [h.question for h in kept] == [h.question for h in every if 2 - 2 * h.score <= 0.01]
    assert 0 < len(kept) < len(every)


def test_changed_training_file_rebuilds(settings, train_files):
    build_examples(settings)
    records = json.loads(Path(train_files.train_file).read_text())
    records.append(
        {"db_id": "cars", "question": "List all makers.", "query": "SELECT maker FROM cars"}
    )
    with open(train_files.train_file, "w") as f:
        json.dump(records, f)
    report = build_examples(settings)
    assert report.status == "built" and report.counts["examples"] == len(records)


@pytest.mark.parametrize(
    "content, reason",
    [
        (None, "not found"),
        ("{not json", "not valid JSON"),
        ('[{"question": "q"}]', "lacks question/query/db_id"),
    ],
)
def test_bad_training_file_fails_with_reason(settings, tmp_path, content, reason):
    train = tmp_path / "bad_train.json"
    if content is not None:
        train.write_text(content)
    bad = settings.model_copy(update={"examples": ExampleSettings(train_file=str(train))})
    report = build_examples(bad)
    assert report.status == "failed" and reason in report.reason
    with pytest.raises(IndexNotBuilt):
        ExampleRetriever(bad.root).search("anything")
