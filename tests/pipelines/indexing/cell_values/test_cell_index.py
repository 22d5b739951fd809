from __future__ import annotations

import pytest

from pipelines.indexing.cell_values.cell_index import CellRetriever
from pipelines.indexing.errors import IndexNotBuilt


@pytest.fixture
def retriever(zoo_index) -> CellRetriever:
    return CellRetriever(zoo_index)


@pytest.mark.parametrize("mode", ["vector", "bm25", "hybrid"])
def test_each_mode_finds_the_value_a_question_names(retriever, mode):
    hits = retriever.search("zoo", "bengal tigers", k=3, mode=mode)
    assert hits[0].value == "Bengal Tiger" and (hits[0].table, hits[0].column) == (
        "animal",
        "species",
    )
    assert all(h.source == mode for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_vector_search_matches_meaning_not_just_words(retriever):
    hits = retriever.search("zoo", "jungle", k=2, mode="vector")
    assert "rainforest" in [h.value for h in hits]
    assert retriever.search("zoo", "jungle", k=2, mode="bm25") == []  # no shared word


def test_threshold_is_a_minimum_score(retriever):
    every = retriever.search("zoo", "tiger", k=10, mode="vector")
    cut = (every[0].score + every[-1].score) / 2
    kept = retriever.search("zoo", "tiger", k=10, mode="vector", threshold=cut)
    assert kept == [h for h in every if h.score >= cut] and 0 < len(kept) < len(every)


def test_hybrid_threshold_keeps_lexical_matches(retriever):
    hits = retriever.search("zoo", "penguin", k=5, mode="hybrid", threshold=0.99)
    assert [h.value for h in hits] == ["Emperor Penguin"]


def test_excluded_columns_are_not_searchable(retriever):
    values = {h.value for h in retriever.search("zoo", "maria@zoo.org", k=10, mode="hybrid")}
    assert "maria@zoo.org" not in values  # email column
    assert not any(
        h.column == "keeperId" for h in retriever.search("zoo", "1", k=10, mode="hybrid")
    )


def test_search_many_keeps_the_best_hit_per_value(retriever):
    hits = retriever.search_many("zoo", ["tiger", "bengal tiger", "penguin"], k=3, mode="bm25")
    values = [h.value for h in hits]
    assert len(values) == len(set(values)) and {"Bengal Tiger", "Emperor Penguin"} <= set(values)


@pytest.mark.parametrize("query", ["", "   ", "AND OR NOT", '"unbalanced', "%_*?"])
def test_odd_queries_do_not_raise(retriever, query):
    for mode in ("vector", "bm25", "hybrid"):
        assert isinstance(retriever.search("zoo", query, mode=mode), list)


def test_unknown_database_and_bad_arguments(retriever):
    with pytest.raises(IndexNotBuilt):
        retriever.search("nope", "tiger")
    with pytest.raises(ValueError):
        retriever.search("zoo", "tiger", k=0)
    with pytest.raises(ValueError):
        retriever.search("zoo", "tiger", mode="fuzzy")
