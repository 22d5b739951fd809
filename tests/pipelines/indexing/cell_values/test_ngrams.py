from __future__ import annotations

from pipelines.indexing.cell_values.ngrams import question_ngrams


def test_ngrams_are_bounded_by_content_words():
    grams = question_ngrams("Which singers live in New York?")
    assert grams == ["singers", "singers live", "live", "live in New", "New", "New York", "York"]
    assert not any(g.split()[0].lower() in {"which", "in"} for g in grams)


def test_quoted_spans_come_first_and_whole():
    grams = question_ngrams("Find pets of type \"Great Dane\" or 'Bull Terrier' owned by O'Neil")
    assert grams[:2] == ["Great Dane", "Bull Terrier"]
    assert "O'Neil" in grams


def test_longer_ngrams_and_no_duplicates():
    grams = question_ngrams("red car red car red car", max_n=2)
    assert grams == ["red", "red car", "car", "car red"]
    assert all(len(g.split()) <= 2 for g in grams)
    assert question_ngrams("what is the of") == []
