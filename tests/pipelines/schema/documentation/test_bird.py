from __future__ import annotations

from pipelines.schema import load_descriptions

HEADER = "original_column_name,column_name,column_description,data_format,value_description\n"


def test_each_csv_is_one_table_keyed_lower_case(tmp_path):
    (tmp_path / "Members.csv").write_text(
        HEADER + "Plan_ID,plan id,the member's plan,integer,\n", encoding="utf-8"
    )
    (tmp_path / "notes.txt").write_text("not a description file")
    (tmp_path / "broken.csv").write_text("just,some,columns\n1,2,3\n")
    descs = load_descriptions(tmp_path)
    assert descs == {"members": {"plan_id": "the member's plan"}, "broken": {}}


def test_cp1252_and_bom_files_decode(tmp_path):
    (tmp_path / "a.csv").write_bytes((HEADER + "x,,price in \u20ac,real,\n").encode("cp1252"))
    (tmp_path / "b.csv").write_bytes(("\ufeff" + HEADER + "y,,na\u00efve,text,\n").encode("utf-8"))
    descs = load_descriptions(tmp_path)
    assert descs["a"]["x"] == "price in \u20ac"
    assert descs["b"]["y"] == "na\u00efve"


def test_whitespace_is_folded_and_empty_rows_dropped(tmp_path):
    (tmp_path / "t.csv").write_text(
        HEADER + ' c ,,"two\n lines",text,  \n,,orphan,text,\nd,,,text,\n'
    )
    assert load_descriptions(tmp_path) == {"t": {"c": "two lines"}}


def test_no_folder_no_descriptions(tmp_path):
    assert load_descriptions(None) == {}
    assert load_descriptions(tmp_path / "absent") == {}


def test_read_keeps_description_values_and_a_readable_name_apart(tmp_path):
    from pipelines.contracts import DatabaseRef
    from pipelines.schema.documentation import bird

    folder = tmp_path / "database_description"
    folder.mkdir()
    (folder / "members.csv").write_text(
        HEADER
        + "state,state,State of residence,text,Two-letter code\n"
        + "dob,date of birth,,text,\n"
        + "note,,,text,\n"
    )
    db = DatabaseRef(db_id="m", path=str(tmp_path / "m.sqlite"), description_dir=str(folder))
    docs = bird.read(db)
    assert docs.sources == ("bird_csv",)
    state = docs.column("members", "state")
    assert (state.description, state.values, state.label) == (
        "State of residence",
        "Two-letter code",
        "",  # "state" only repeats the name
    )
    assert docs.column("members", "dob").label == "date of birth"
    assert docs.column("members", "note") is None  # nothing documented
    assert not bird.read(db.model_copy(update={"description_dir": None}))
