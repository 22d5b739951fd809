"""`scale-analytics cheatsheet show|reset|export`: which sheets ``--db`` names, what each action
prints, and bad input as one line on stderr with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from pipelines.agentic_mode import Cheatsheet, load_taxonomy
from pipelines.contracts import DatabaseRef
from pipelines.settings import CheatsheetSettings

TAXONOMY = load_taxonomy()


@pytest.fixture
def sheets(tiny_spider, tmp_path):
    """Sheets of spider's ``music`` (2 rules), another ``music`` (1) and ``claims`` (1), and the
    overrides that point the command at them and at the tiny Spider benchmark."""
    root = tmp_path / "sheets"
    settings = CheatsheetSettings(root=str(root))
    music = DatabaseRef(db_id="music", path=str(tiny_spider / "database/music/music.sqlite"))
    other = DatabaseRef(db_id="music", path=str(tmp_path / "other/music.sqlite"))
    claims = DatabaseRef(db_id="claims", path=str(tmp_path / "claims.sqlite"))
    column = TAXONOMY.finding(
        "column_not_found", source="sqlite", detail="no such column: nme", identifier="nme"
    )
    group = TAXONOMY.finding("group_by_missing", source="sqlite", detail="HAVING on nothing")
    Cheatsheet.open(settings, music).record(column, fixed=True)
    Cheatsheet.open(settings, music).record(group)
    Cheatsheet.open(settings, other).record(group)
    Cheatsheet.open(settings, claims).record(column)
    return {
        "root": root,
        "music": Cheatsheet.open(settings, music),
        "other": Cheatsheet.open(settings, other),
        "claims": Cheatsheet.open(settings, claims),
        "at": f"pipeline.cheatsheet.root={root}",
        "bench": ["benchmark=spider_dev", f"benchmark.data_dir={tiny_spider}"],
    }


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["cheatsheet", *argv])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def exported(capsys, *argv: str) -> dict[str, list[str]]:
    """``file name -> rule keys`` of what ``export`` prints for ``argv``."""
    code, out, _ = run(capsys, "export", *argv)
    assert code == 0
    return {Path(e["file"]).name: [r["key"] for r in e["rules"]] for e in json.loads(out)}


def test_show_prints_a_ranked_table_per_sheet(sheets, capsys):
    code, out, err = run(capsys, "show", sheets["at"])
    assert code == 0 and not err
    for name in ("music", "other", "claims"):
        assert str(sheets[name].path) in out
    assert "rank" in out and "class" in out and "seen" in out and "fixed" in out
    assert "There is no column nme: use only columns listed under their table." in out
    music = out[out.index(str(sheets["music"].path)) :]
    assert music.index("column_not_found") < music.index("group_by_missing")  # fixed ranks first


def test_db_names_a_benchmarks_database_an_id_or_a_file(sheets, capsys):
    music, other = sheets["music"].path.name, sheets["other"].path.name
    assert exported(capsys, sheets["at"]).keys() == {
        music,
        other,
        sheets["claims"].path.name,
    }
    assert exported(capsys, "--db", "music", sheets["at"], *sheets["bench"]) == {
        music: ["column_not_found:nme", "group_by_missing"]
    }
    assert exported(capsys, "--db", "music", sheets["at"]).keys() == {music, other}
    database = sheets["music"].database()[1]
    assert exported(capsys, sheets["at"], "--db", database).keys() == {music}
    assert exported(capsys, "--db", "nothing_learned", sheets["at"]) == {}


def test_export_writes_every_field_to_a_file(sheets, tmp_path, capsys):
    out = tmp_path / "export" / "rules.json"
    code, printed, _ = run(capsys, "export", "--db", "claims", "--out", str(out), sheets["at"])
    assert code == 0 and f"wrote 1 rules of 1 cheatsheets to {out}" in printed
    (entry,) = json.loads(out.read_text())
    assert (entry["db_id"], entry["file"]) == ("claims", str(sheets["claims"].path))
    assert entry["rules"] == sheets["claims"].export()


def test_reset_removes_the_sheets_named_and_says_how_many_rules(sheets, capsys):
    code, out, _ = run(capsys, "reset", "--db", "music", sheets["at"], *sheets["bench"])
    assert code == 0 and "removed 2 rules of 1 cheatsheets" in out
    assert not sheets["music"].path.exists() and sheets["other"].path.exists()
    code, out, _ = run(capsys, "reset", sheets["at"])
    assert code == 0 and "removed 2 rules of 2 cheatsheets" in out
    assert Cheatsheet.stored(CheatsheetSettings(root=str(sheets["root"]))) == ()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["show", "--db", "nope", "{at}", "{bench}"],
            "benchmark 'spider_dev' has no database 'nope'",
        ),
        (["show", "pipeline.cheatsheet.root=null"], "pipeline.cheatsheet.root is null"),
        (["show", "{at}"], "is corrupt"),
        (["export", "--db", "claims", "{at}"], "is corrupt"),
        (["show", "pipeline.cheatsheet.top_k=-1"], "top_k"),
        (["show", "stray"], "cannot parse the override 'stray'"),
    ],
)
def test_bad_input_is_one_line_on_stderr(sheets, capsys, monkeypatch, argv, expected):
    monkeypatch.delenv("SCALE_ANALYTICS_TRACEBACK", raising=False)
    sheets["claims"].path.write_text("{not json")
    places = {"{at}": [sheets["at"]], "{bench}": sheets["bench"]}
    code, out, err = run(capsys, *(a for arg in argv for a in places.get(arg, [arg])))
    assert code == 2 and not out.strip()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scale-analytics cheatsheet: "), err
    assert expected in lines[0]
    if "corrupt" in expected:
        assert str(sheets["claims"].path) in lines[0]


def test_reset_removes_a_corrupt_sheet(sheets, capsys):
    sheets["claims"].path.write_text("{not json")
    code, out, _ = run(capsys, "reset", "--db", "claims", sheets["at"])
    assert code == 0 and "removed 0 rules of 1 cheatsheets" in out
    assert not sheets["claims"].path.exists()


@pytest.mark.parametrize("argv", [[], ["purge"], ["show", "--out", "x.json"]])
def test_a_missing_action_or_a_misplaced_flag_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["cheatsheet", *argv])
    assert exited.value.code == 2
    assert "usage: scale-analytics cheatsheet" in capsys.readouterr().err
