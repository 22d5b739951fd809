"""The ``>>>`` examples in the project's docstrings run, one test per module.

A test over the modules that hold examples rather than ``--doctest-modules``: that option imports
every module under the given folders (some need optional packages such as vLLM or llama-cpp),
collects nothing unless the packages are added to ``testpaths``, and shares names with the
examples only through a ``conftest.py`` at the repository root. Here a module is imported by name
only when its source holds ``>>>``, and a failure names the module.

Every example runs: an example that needs a model server or the network is written as a plain
illustration (no ``>>>``), so ``+SKIP`` is refused. The examples may use these names:

- ``db``: a ``DatabaseRef`` to a small Spider-style ``concert_singer`` SQLite database (tables
  ``stadium``, ``singer``, ``concert``, ``singer_in_concert``; the last declares no keys, so its
  joins are inferred) with BIRD-style column descriptions;
- ``spider_dir`` / ``bird_dir``: that database in Spider's and in BIRD's layout (the folder, as
  a string), with a ``dev.json`` of three questions, the last on a database that is missing.
"""

from __future__ import annotations

import doctest
import importlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pipelines.contracts import DatabaseRef

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "models", "pipelines", "eval", "serve")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def modules_with_examples() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(ROOT).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = modules_with_examples()

SCHEMA = """
CREATE TABLE stadium (Stadium_ID INTEGER PRIMARY KEY, Location TEXT, Name TEXT, Capacity INTEGER);
CREATE TABLE singer (Singer_ID INTEGER PRIMARY KEY, Name TEXT, Country TEXT, Age INTEGER);
CREATE TABLE concert (concert_ID INTEGER PRIMARY KEY, concert_Name TEXT,
                      Stadium_ID INTEGER REFERENCES stadium (Stadium_ID), Year TEXT);
CREATE TABLE singer_in_concert (concert_ID INTEGER, Singer_ID INTEGER);
INSERT INTO stadium VALUES (1, 'Raith Rovers', 'Stark''s Park', 10104),
                           (2, 'Ayr United', 'Somerset Park', 11998),
                           (3, 'East Fife', 'Bayview Stadium', 2000);
INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52),
                          (2, 'Timbaland', 'United States', 32), (3, 'Justin Brown', 'France', 29),
                          (4, 'Rose White', 'France', 41), (5, 'John Nizinik', 'France', 43),
                          (6, 'Tribal King', 'France', 25);
INSERT INTO concert VALUES (1, 'Auditions', 1, '2014'), (2, 'Super bootcamp', 2, '2014'),
                           (3, 'Home Visits', 2, '2015');
INSERT INTO singer_in_concert VALUES (1, 2), (1, 3), (1, 5), (2, 3), (3, 5), (3, 6);
"""
SINGER_CSV = """original_column_name,column_name,column_description,data_format,value_description
Singer_ID,singer id,,integer,
Name,name,full name,text,
Country,nationality,country of citizenship,text,
Age,age,age in years,integer,
"""
QUESTIONS = [
    ("concert_singer", "How many singers do we have?", "SELECT count(*) FROM singer", ""),
    (
        "concert_singer",
        "What are the names of the French singers?",
        "SELECT Name FROM singer WHERE Country = 'France'",
        "French singers refer to Country = 'France'",
    ),
    ("car_1", "How many car makers are there?", "SELECT count(*) FROM car_makers", ""),
]


def _write_example_benchmarks(root: Path) -> dict[str, object]:
    bird_db = root / "bird" / "dev_databases" / "concert_singer"
    descriptions = bird_db / "database_description"
    descriptions.mkdir(parents=True)
    (descriptions / "singer.csv").write_text(SINGER_CSV, encoding="utf-8")
    connection = sqlite3.connect(bird_db / "concert_singer.sqlite")
    connection.executescript(SCHEMA)
    connection.close()
    spider_db = root / "spider" / "database" / "concert_singer"
    spider_db.mkdir(parents=True)
    shutil.copy(bird_db / "concert_singer.sqlite", spider_db / "concert_singer.sqlite")
    (root / "spider" / "dev.json").write_text(
        json.dumps([{"db_id": d, "question": q, "query": sql} for d, q, sql, _ in QUESTIONS])
    )
    (root / "bird" / "dev.json").write_text(
        json.dumps(
            [
                {
                    "question_id": i,
                    "db_id": d,
                    "question": q,
                    "SQL": sql,
                    "evidence": hint,
                    "difficulty": "simple",
                }
                for i, (d, q, sql, hint) in enumerate(QUESTIONS)
            ]
        )
    )
    return {
        "db": DatabaseRef(
            db_id="concert_singer",
            path=str(bird_db / "concert_singer.sqlite"),
            description_dir=str(descriptions),
        ),
        "spider_dir": str(root / "spider"),
        "bird_dir": str(root / "bird"),
    }


@pytest.fixture(scope="module")
def namespace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return _write_example_benchmarks(tmp_path_factory.mktemp("doctest"))


def test_modules_with_examples_are_found():
    assert {"pipelines.sandbox.canonical", "eval.metrics.sampling", "core.config"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, namespace, monkeypatch):
    monkeypatch.chdir(Path(namespace["spider_dir"]).parent)  # no example may lean on the checkout
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module, name, extraglobs=namespace)
    examples = [example for test in tests for example in test.examples]
    assert examples, f"{name} writes '>>>' where doctest finds no example (not in a docstring?)"
    skipped = [e.source.strip() for e in examples if e.options.get(doctest.SKIP)]
    assert not skipped, f"{name}: an example that cannot run is an illustration, not '>>>'"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{name}: {results.failed} of {results.attempted} examples failed"
