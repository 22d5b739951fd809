"""Documentation files read in turn: missing ones passed over, unreadable ones skipped with a
warning, and nothing read past what the caller takes."""

from __future__ import annotations

import json

from pipelines.schema.documentation.files import readable


def test_unreadable_files_are_skipped_with_a_warning_and_reading_stops_when_the_caller_does(
    tmp_path, caplog
):
    broken, good, later = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    broken.write_text("{not json")
    good.write_text('{"x": 1}')
    later.write_text('{"x": 2}')
    read: list[str] = []

    def load(path):
        read.append(path.name)
        return json.loads(path.read_text())

    files = readable([tmp_path / "missing.json", broken, good, later], load, (ValueError,), "doc")
    assert next(files) == (good, {"x": 1})
    assert read == ["a.json", "b.json"]  # c.json is not read until asked for
    assert "skipping unreadable doc" in caplog.text and "a.json" in caplog.text
