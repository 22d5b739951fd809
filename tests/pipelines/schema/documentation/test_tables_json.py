from __future__ import annotations

import json
from pathlib import Path

from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation import tables_json

ENTRY = {
    "db_id": "schools",
    "table_names_original": ["frpm", "satscores"],
    "table_names": ["free meals", "sat scores"],
    "column_names_original": [[-1, "*"], [0, "CDSCode"], [0, "c14"], [1, "cds"], [1, "NumTstTakr"]],
    "column_names": [
        [-1, "*"],
        [0, "cds code"],
        [0, "title i"],
        [1, "cds"],
        [1, "number of test takers"],
    ],
}


def _spider_layout(root: Path, entry: dict) -> DatabaseRef:
    folder = root / "database" / entry["db_id"]
    folder.mkdir(parents=True)
    (root / "tables.json").write_text(json.dumps([{"db_id": "other"}, entry]))
    return DatabaseRef(db_id=entry["db_id"], path=str(folder / f"{entry['db_id']}.sqlite"))


def test_parallel_lists_with_pairs_or_strings(tmp_path):
    entry = {
        **ENTRY,
        "column_descriptions": [[-1, ""], [0, "school code"], [0, "Title I funded"], "", "takers"],
        "table_descriptions": ["Free meal eligibility", ""],
    }
    docs = tables_json.read(_spider_layout(tmp_path, entry))
    assert docs.sources == ("tables_json",)
    assert docs.column("frpm", "c14").description == "Title I funded"
    assert docs.column("frpm", "c14").label == "title i"
    assert docs.column("satscores", "numtsttakr").description == "takers"
    assert docs.column("frpm", "cdscode").label == ""  # the readable name only repeats it
    assert docs.table("frpm").description == "Free meal eligibility"
    assert docs.table("satscores").description == ""


def test_mappings_by_qualified_name_or_nested(tmp_path):
    entry = {
        **ENTRY,
        "column_descriptions": {"frpm.c14": "Title I funded", "satscores": {"cds": "school code"}},
        "table_descriptions": {"satscores": "SAT results"},
    }
    docs = tables_json.from_entry(entry)
    assert docs.column("frpm", "c14").description == "Title I funded"
    assert docs.column("satscores", "cds").description == "school code"
    assert docs.table("satscores").description == "SAT results"


def test_the_named_file_wins_and_a_missing_entry_or_broken_file_documents_nothing(tmp_path, caplog):
    named = tmp_path / "mine.json"
    named.write_text(json.dumps([{**ENTRY, "column_descriptions": {"frpm.c14": "named"}}]))
    db = DatabaseRef(db_id="schools", path=str(tmp_path / "x.sqlite"), tables_json=str(named))
    assert tables_json.read(db).column("frpm", "c14").description == "named"
    assert not tables_json.read(db.model_copy(update={"db_id": "absent"}))
    named.write_text("{not json")
    assert not tables_json.read(db)
    assert "unreadable tables file" in caplog.text


def test_value_enums_as_label_lists_or_text_in_either_shape(tmp_path):
    listed = {**ENTRY, "value_enums": [[], [0, ["A", "B"]], ["Y", "N"], "", [1, 2, 3]]}
    docs = tables_json.read(_spider_layout(tmp_path / "lists", listed))
    assert docs.column("frpm", "CDSCode").values == "one of A, B"
    assert docs.column("frpm", "c14").values == "one of Y, N"
    assert docs.column("satscores", "NumTstTakr").values == "one of 1, 2, 3"
    mapped = {**ENTRY, "value_enums": {"frpm": {"c14": "Y = funded; N = not funded"}}}
    docs = tables_json.read(_spider_layout(tmp_path / "map", mapped))
    assert docs.column("frpm", "c14").values == "Y = funded; N = not funded"
    assert docs.column("frpm", "c14").note("c14") == "values: Y = funded; N = not funded"
