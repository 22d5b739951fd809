from __future__ import annotations

import pytest

from pipelines.indexing.examples.question_skeleton import (
    SchemaWords,
    name_words,
    singular,
    skeletonise,
)

WORDS = SchemaWords.from_names(
    ["singer", "singer_in_concert", "stadium"], ["Name", "Country", "Song_release_year", "Age"]
)


@pytest.mark.parametrize(
    "question, literals, expected",
    [
        ("How many singers do we have?", (), "how many [TABLE] do we have ?"),
        (
            "What is the average age of singers from France?",
            (),
            "what is the average [COLUMN] of [TABLE] from [VALUE] ?",
        ),
        (
            "Show the name of singers with song release year after 2008.",
            (),
            "show the [COLUMN] of [TABLE] with [COLUMN] after [NUMBER] .",
        ),
        ("List stadiums named 'Stark's Park'", (), "list [TABLE] named [VALUE]"),
        ("What is the singer's age?", (), "what is the [TABLE] 's [COLUMN] ?"),
        ('Which singer sang "You"?', (), "which [TABLE] sang [VALUE] ?"),
        ("singers in the united states", ("united states",), "[TABLE] in the [VALUE]"),
        (
            "Count singer in concert rows for the 2nd time, 1,000 or 3.5",
            (),
            "count [TABLE] rows for the [NUMBER] time , [NUMBER] or [NUMBER]",
        ),
    ],
)
def test_skeletonise(question, literals, expected):
    assert skeletonise(question, WORDS, literals) == expected


def test_same_structure_different_databases_share_a_skeleton():
    pets = SchemaWords.from_names(["pets"], ["name", "age"])
    cars = SchemaWords.from_names(["cars"], ["name", "maker"])
    assert skeletonise("How many pets are there?", pets) == skeletonise(
        "How many cars are there?", cars
    )


def test_without_schema_words_only_values_and_numbers_are_masked():
    assert (
        skeletonise("How many singers are older than 30 in Spain?")
        == "how many singers are older than [NUMBER] in [VALUE] ?"
    )


def test_names_split_into_words():
    assert name_words("SongReleaseYear") == ("song", "release", "year")
    assert name_words("cities_visited") == ("city", "visited")
    # crude, but the same on both sides: a plural and its singular normalise alike
    assert [singular(w) for w in ("singers", "cities", "status", "class")] == [
        "singer",
        "city",
        "status",
        "class",
    ]
    assert singular("series") == singular(singular("series"))


def test_from_spider_tables_uses_original_and_natural_names():
    entry = {
        "table_names_original": ["Perpetrator"],
        "table_names": ["perpetrator"],
        "column_names_original": [[-1, "*"], [0, "Killed"]],
        "column_names": [[-1, "*"], [0, "killed"]],
    }
    words = SchemaWords.from_spider_tables(entry)
    assert ("perpetrator",) in words.tables and ("killed",) in words.columns
