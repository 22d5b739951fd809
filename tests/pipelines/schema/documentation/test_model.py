from __future__ import annotations

import pytest

from pipelines.schema.documentation.model import ColumnDoc, SchemaDocs, TableDoc, adds_to

# Real comments of the enterprise work-item database (eval/enterprise/schema.py): each names
# its own column, and the values it lists appear in no other note.
STAGE = (
    "Workflow stage; resolved and canceled are the closed stages. One of: 'queued' = open, "
    "waiting for a support engineer to pick it up; 'resolved' = closed, the customer's problem "
    "was solved; 'canceled' = closed without a resolution (a duplicate, withdrawn, or spam)."
)
LINKS = (
    "Typed links from the ticket to other work items, a list (possibly empty). type is the "
    "relation from this item to the target ('is_resolved_by' -> issue). All link types: "
    "'is_resolved_by' = ticket -> issue whose fix resolves the ticket (inverse: resolves); "
    "'resolves' = issue -> ticket it resolves (inverse: is_resolved_by)."
)


@pytest.mark.parametrize(
    ("text", "names", "adds"),
    [
        ("Adjudication status of the claim", ("claim_status",), True),  # "adjudication"
        ("status of each claim", ("claimStatus",), False),
        ("a member of the plan", ("members", "plans"), False),  # plural and singular agree
        ("State of the school", ("state", "schools"), False),  # the table's name says "school"
        ("Member's first name", ("first_name", "members"), False),  # the s of member's
        ("Unique identifier of the member", ("member_id", "members"), True),  # "unique"
        ("Students eligible for Title I funding", ("c14",), True),
        ("date of birth", ("dob",), True),
        ("date of birth", ("date_of_birth",), False),
        ("", ("state",), False),
        (STAGE, ("stage", "tickets"), True),
        (LINKS, ("links", "tickets"), True),
    ],
)
def test_adds_to(text, names, adds):
    assert adds_to(text, *names) is adds


def test_note_shows_a_description_only_where_it_adds_to_the_names():
    doc = ColumnDoc(description="Date of birth", values="YYYY-MM-DD", label="birth date")
    assert doc.note("dob") == "Date of birth; values: YYYY-MM-DD"  # the final period goes
    assert doc.note("date_of_birth") == "values: YYYY-MM-DD"
    assert doc.note("dob", "values") == "values: YYYY-MM-DD"
    assert doc.note("date_of_birth", "all") == "Date of birth (birth date); values: YYYY-MM-DD"
    assert doc.note("dob", "off") == ""
    assert ColumnDoc(description="State of the school").note("state", table="schools") == ""
    assert ColumnDoc(description="State of the school").note("state") == "State of the school"


@pytest.mark.parametrize("text", [STAGE, LINKS])
def test_a_comment_naming_its_own_column_keeps_its_whole_value_list(text):
    for mode in ("auto", "values"):
        note = ColumnDoc(description=text).note(text.split()[0].lower(), mode, "tickets")
        assert note == text[:-1]  # whole: only the final period goes
    assert "'canceled' = closed" in ColumnDoc(description=STAGE).note("stage", table="tickets")


def test_note_keeps_every_value_note_and_never_cuts():
    assert ColumnDoc(values="e.g. 12, 13").note("x") == "values: e.g. 12, 13"
    long = "A first sentence. " + "word " * 300 + "'last' = the end."
    assert ColumnDoc(description=long).note("x") == long[:-1]
    values = "; ".join(f"'v{i}' = value {i}" for i in range(80))
    assert ColumnDoc(values=values).note("x", "values") == f"values: {values}"


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
