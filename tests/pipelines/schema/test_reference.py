"""The reference schema prompt: DDL, the value notes of BIRD-style descriptions, example rows."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.agents.runtime import as_executor
from pipelines.contracts import DatabaseRef
from pipelines.sandbox import Sandbox
from pipelines.schema.reference import SchemaReadError, reference_schema

SINGER_CSV = (
    "original_column_name,column_name,column_description,data_format,value_description\n"
    "singer_id,singer id,Unique id.,integer,e.g. 1\n"
    "name,name,Singer's name.,text,\n"
    "country,country,Country of citizenship.,text,\"Full English name, e.g. 'France'; never a code.\"\n"
)


def with_descriptions(db: DatabaseRef, tmp_path) -> DatabaseRef:
    folder = tmp_path / "database_description"
    folder.mkdir()
    (folder / "singer.csv").write_text(SINGER_CSV)
    return db.model_copy(update={"description_dir": str(folder)})


async def test_column_notes_follow_their_table_and_skip_what_the_name_says(
    tiny_db, sandbox, tmp_path
):
    reference = await reference_schema(sandbox, with_descriptions(tiny_db, tmp_path), sample_rows=2)
    singer, concert = reference.text().split("\n\n")
    assert singer.startswith("CREATE TABLE singer")
    notes = singer[singer.index("/*\nColumn notes:") : singer.index("example rows")]
    assert (
        "country: Country of citizenship; values: Full English name, e.g. 'France'; never a code."
        in notes
    )
    # "Singer's name." says no more than the column's and table's names
    assert "singer_id: Unique id; values: e.g. 1\n" in notes and "\nname:" not in notes
    assert singer.index("Column notes") < singer.index("2 example rows")
    assert "Column notes" not in concert and "2 example rows" in concert
    assert reference.text(["CONCERT"]) == concert
    # the example rows apart, given up first by a prompt too long for the model
    bare = reference.text(["singer"], rows=False)
    assert bare == singer.split("\n/*\n2 example rows")[0] and "Column notes" in bare
    assert reference.tables[0].render() == singer
    assert set(reference.sizes) == {"singer", "concert"}
    assert reference.tokens == sum(reference.sizes.values())


async def test_a_name_that_does_not_spell_its_meaning_gets_its_description(
    tiny_db, sandbox, tmp_path
):
    db = with_descriptions(tiny_db, tmp_path)
    csv = tmp_path / "database_description" / "singer.csv"
    csv.write_text(SINGER_CSV + "age,,Years since birth.,integer,\n")
    auto = (await reference_schema(sandbox, db, sample_rows=0)).text()
    assert "age: Years since birth\n" in auto
    values = (await reference_schema(sandbox, db, sample_rows=0, column_notes="values")).text()
    assert "age:" not in values and "country: values:" in values
    everything = (await reference_schema(sandbox, db, sample_rows=0, column_notes="all")).text()
    assert "name: Singer's name\n" in everything


async def test_without_descriptions_or_with_notes_off_the_prompt_is_ddl_and_rows(
    tiny_db, sandbox, tmp_path
):
    plain = (await reference_schema(sandbox, tiny_db, sample_rows=3)).text()
    off = await reference_schema(
        sandbox, with_descriptions(tiny_db, tmp_path), sample_rows=3, column_notes="off"
    )
    assert plain == off.text() and "Column notes" not in plain
    assert plain.count("3 example rows") == 2
    ddl_only = (await reference_schema(sandbox, tiny_db, sample_rows=0)).text()
    assert "example rows" not in ddl_only and ddl_only.count("CREATE TABLE") == 2


async def test_an_unreadable_database_is_a_schema_read_error(sandbox, tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(SchemaReadError, match="cannot read the schema of bad"):
        await reference_schema(sandbox, DatabaseRef(db_id="bad", path=str(bad)))


LINKS_COMMENT = (
    "Typed links to other items, a list. type is the relation to the target; display_id is "
    "its key. All link types: 'blocks' = it blocks the target; 'resolves' = it fixes the target; "
    "'relates_to' = a loose relation."
)
META_COMMENT = (
    "Triage record. stage is one of: 'triage' = new; 'resolved' = closed. origin.channel is "
    "where it came in; origin.region is the customer's region."
)


async def test_a_nested_columns_documentation_gives_each_sub_field_its_own_note(tickets_db):
    conn = duckdb.connect(tickets_db.path)
    conn.execute(
        f"COMMENT ON COLUMN tickets.links IS '{LINKS_COMMENT.replace(chr(39), chr(39) * 2)}'"
    )
    conn.execute(
        f"COMMENT ON COLUMN tickets.meta IS '{META_COMMENT.replace(chr(39), chr(39) * 2)}'"
    )
    conn.close()
    with Sandbox() as sandbox:
        reference = await reference_schema(as_executor(sandbox), tickets_db, sample_rows=0)
    notes = reference.text(["tickets"])
    lines = notes.splitlines()
    assert "links: Typed links to other items, a list" in lines
    assert (
        "links.type: type is the relation to the target. All link types: 'blocks' = it blocks "
        "the target; 'resolves' = it fixes the target; 'relates_to' = a loose relation" in lines
    )
    assert "links.display_id: display_id is its key" in lines
    assert "meta: Triage record" in lines
    assert "meta.stage: stage is one of: 'triage' = new; 'resolved' = closed" in lines
    assert "meta.origin.channel: origin.channel is where it came in" in lines
    assert "meta.origin.region: origin.region is the customer's region" in lines
    assert "title: one-line summary" in lines
    assert not any(line.startswith("meta.score") for line in lines)  # nothing said about it
