from __future__ import annotations

import pytest

from pipelines.schema.documentation.model import (
    NOTE_CHARS,
    ColumnDoc,
    SchemaDocs,
    TableDoc,
    spelled_by,
)


@pytest.mark.parametrize(
    ("name", "text", "spelled"),
    [
        ("claim_status", "Adjudication status of the claim", True),
        ("claimStatus", "status of each claim", True),
        ("members", "a member of the plan", True),  # plural and singular agree
        ("c14", "Students eligible for Title I funding", False),
        ("dob", "date of birth", False),
        ("state", "", False),
    ],
)
def test_spelled_by(name, text, spelled):
    assert spelled_by(name, text) is spelled


def test_note_shows_a_description_only_where_the_name_does_not_spell_it():
    doc = ColumnDoc(description="Date of birth", values="YYYY-MM-DD", label="birth date")
    assert doc.note("dob") == "Date of birth; values: YYYY-MM-DD"  # the final period goes
    assert doc.note("date_of_birth") == "values: YYYY-MM-DD"
    assert doc.note("dob", "values") == "values: YYYY-MM-DD"
    assert doc.note("date_of_birth", "all") == "Date of birth (birth date); values: YYYY-MM-DD"
    assert doc.note("dob", "off") == ""


def test_note_skips_example_only_values_and_cuts_long_prose():
    assert ColumnDoc(values="e.g. 12, 13").note("x") == ""
    long = "A first sentence. " + "word " * 100
    note = ColumnDoc(description=long).note("x")
    assert note.startswith("A first sentence. word") and note.endswith(" ...")
    assert len(note) <= NOTE_CHARS + 4
    sentences = (
        "A first sentence of ninety characters or so, long enough to be kept whole here. " * 4
    )
    assert ColumnDoc(description=sentences).note("x").endswith("here")


def test_or_else_fills_each_empty_field_from_the_other_source():
    first = SchemaDocs(
        tables={"t": TableDoc(columns={"a": ColumnDoc(description="mine")})}, sources=("yaml",)
    )
    second = SchemaDocs(
        tables={
            "t": TableDoc(
                description="a table",
                columns={
                    "a": ColumnDoc(description="theirs", values="1-5"),
                    "b": ColumnDoc(label="bee"),
                },
            )
        },
        sources=("bird_csv",),
    )
    merged = first.or_else(second)
    assert merged.column("T", "A") == ColumnDoc(description="mine", values="1-5")
    assert merged.column("t", "b").label == "bee"
    assert merged.table("t").description == "a table"
    assert merged.sources == ("yaml", "bird_csv")
    assert merged.documented() == 2
    assert not SchemaDocs() and merged
