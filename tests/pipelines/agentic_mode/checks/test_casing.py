"""IdentifierCasing on a SQLite database whose names mix case: the rewrite reads as the schema
does, returns the same rows, and its headers are the schema's spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.agentic_mode.checks import IdentifierCasing
from pipelines.contracts import DatabaseRef
from pipelines.schema import introspect
from tests.pipelines.agentic_mode.conftest import context_for, rows
from tests.pipelines.conftest import sqlite_db

STAGE = IdentifierCasing()


@pytest.fixture
def concerts(tmp_path: Path) -> DatabaseRef:
    return sqlite_db(
        tmp_path / "concerts.sqlite",
        """
        CREATE TABLE Singer (Singer_ID INTEGER PRIMARY KEY, Name TEXT, Country TEXT);
        CREATE TABLE Concert (concert_ID INTEGER PRIMARY KEY, Singer_ID INTEGER, Year TEXT,
                              name TEXT);
        INSERT INTO Singer VALUES (1, 'Joe', 'France'), (2, 'Ann', 'Spain');
        INSERT INTO Concert VALUES (10, 1, '2014', 'Auditions'), (11, 2, '2015', 'Finals');
        """,
    )


@pytest.mark.parametrize(
    ("sql", "expected", "headers"),
    [
        (
            "SELECT name, country FROM singer WHERE COUNTRY = 'France'",
            "SELECT Name, Country FROM Singer WHERE Country = 'France'",
            ("Name", "Country"),
        ),
        ("SELECT SINGER.name FROM SINGER", "SELECT Singer.Name FROM Singer", ("Name",)),
        (
            "SELECT s.NAME, c.YEAR FROM singer AS s JOIN concert AS c ON s.singer_id = c.SINGER_ID",
            "SELECT s.Name, c.Year FROM Singer AS s JOIN Concert AS c ON s.Singer_ID = c.Singer_ID",
            ("Name", "Year"),
        ),
        (
            "SELECT country FROM singer WHERE singer_id IN "
            "(SELECT singer_id FROM concert WHERE year = '2014')",
            "SELECT Country FROM Singer WHERE Singer_ID IN "
            "(SELECT Singer_ID FROM Concert WHERE Year = '2014')",
            ("Country",),
        ),
    ],
)
def test_names_are_spelled_as_the_schema_spells_them(concerts, sql, expected, headers):
    rewrite = STAGE.rewrite(sql, context_for(introspect(concerts, 0)))
    assert rewrite is not None and rewrite.after == expected
    after_headers, after_rows = rows(concerts, rewrite.after)
    assert after_rows == rows(concerts, sql)[1]
    assert after_headers == headers


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT Name FROM Singer",  # already as the schema spells it
        "SELECT count(*) AS N FROM Singer ORDER BY N",  # an alias is the query's own
        "WITH SINGERS AS (SELECT Name FROM Singer) SELECT Name FROM SINGERS",
        # Singer.Name and Concert.name: an unqualified NAME could be either spelling
        "SELECT NAME FROM Singer JOIN Concert USING (Singer_ID) WHERE 1 = 0",
    ],
)
def test_what_the_schema_does_not_spell_is_left_alone(concerts, sql):
    assert STAGE.rewrite(sql, context_for(introspect(concerts, 0))) is None


def test_a_rewrite_says_what_changed(concerts):
    rewrite = STAGE.rewrite("SELECT name FROM singer", context_for(introspect(concerts, 0)))
    assert rewrite.detail == "name → Name, singer → Singer"
    assert (rewrite.stage, rewrite.before) == ("identifier_casing", "SELECT name FROM singer")
