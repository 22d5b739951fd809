"""Build the demo benchmark on disk, in BIRD's layout, so the BIRD loader reads it unchanged.

    paths = build_demo(Path(".cache/demo"))      # a few seconds the first time, then instant
    paths.database      # .cache/demo/dev_databases/claims/claims.sqlite
    paths.dev_json      # .cache/demo/dev.json  [{question_id, db_id, question, evidence, SQL, difficulty}]

Layout written under ``data_dir``::

    dev.json
    dev_tables.json                                  BIRD/Spider tables.json for the one database
    dev_databases/claims/claims.sqlite
    dev_databases/claims/claims.examples.yml        the database's own solved examples (below)
    dev_databases/claims/database_description/<table>.csv
    .demo_build.json                                 fingerprint: seed + digest of generator sources

The build is deterministic (one seeded RNG, fixed dates), atomic, idempotent and safe under
concurrent callers, by the machinery ``eval/embedded_benchmark.py`` shares with the enterprise
benchmark.

``examples.yaml`` holds solved examples that are not test questions; they are written beside the
database, where ``pipelines/indexing/examples/own_examples.py`` finds them. They are not part of the
fingerprint: a changed (or missing) examples file is rewritten on the next call without
regenerating the database.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path
from typing import Literal

from core.types import Frozen
from eval.demo import synth
from eval.demo.schema import TABLES
from eval.embedded_benchmark import (
    EmbeddedBuild,
    SolvedQuestion,
    dev_entry,
    load_entries,
    refuse_test_questions,
    replacing,
    write_atomic,
)
from eval.errors import EvalError
from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation.bird import DESCRIPTION_DIR

DEMO_DB_ID = "claims"
DEFAULT_SEED = 7
PACKAGE_DIR = Path(__file__).resolve().parent
QUESTIONS_FILE = PACKAGE_DIR / "questions.yaml"
EXAMPLES_FILE = PACKAGE_DIR / "examples.yaml"


class DemoBenchmarkError(EvalError):
    """The demo benchmark could not be built or its question file is invalid."""


BUILD = EmbeddedBuild(
    name="demo",
    db_id=DEMO_DB_ID,
    package_dir=PACKAGE_DIR,
    generator_version=1,  # bump when the output format changes without a source change
    error=DemoBenchmarkError,
    dialect="sqlite",
)
FINGERPRINT_NAME = BUILD.fingerprint_name


class DemoQuestion(SolvedQuestion):
    """One hand-written question of ``questions.yaml``."""

    difficulty: Literal["simple", "moderate", "challenging"]


class DemoExample(DemoQuestion):
    """One solved example of ``examples.yaml``: shown to pipelines, never a test question."""


class DemoBenchmarkPaths(Frozen):
    """Where the built demo benchmark lives; ``rebuilt`` says whether this call wrote it."""

    data_dir: Path
    dev_json: Path
    tables_json: Path
    database: Path
    description_dir: Path
    examples_file: Path
    db_id: str = DEMO_DB_ID
    rebuilt: bool = False

    @classmethod
    def under(cls, data_dir: Path, *, rebuilt: bool = False) -> DemoBenchmarkPaths:
        db_dir = data_dir / "dev_databases" / DEMO_DB_ID
        return cls(
            data_dir=data_dir,
            dev_json=data_dir / "dev.json",
            tables_json=data_dir / "dev_tables.json",
            database=db_dir / f"{DEMO_DB_ID}.sqlite",
            description_dir=db_dir / DESCRIPTION_DIR,
            examples_file=db_dir / f"{DEMO_DB_ID}.examples.yml",
            rebuilt=rebuilt,
        )

    def database_ref(self) -> DatabaseRef:
        return DatabaseRef(
            db_id=self.db_id, path=str(self.database), description_dir=str(self.description_dir)
        )


def load_questions(path: Path = QUESTIONS_FILE) -> tuple[DemoQuestion, ...]:
    """The hand-written questions; a malformed file raises ``DemoBenchmarkError``."""
    return load_entries(
        path, DemoQuestion, benchmark="demo", kind="question", error=DemoBenchmarkError
    )


def load_examples(path: Path = EXAMPLES_FILE) -> tuple[DemoExample, ...]:
    """The solved examples; a malformed file, or one that holds a test question, raises."""
    examples = load_entries(
        path, DemoExample, benchmark="demo", kind="example", error=DemoBenchmarkError
    )
    refuse_test_questions(examples, load_questions(), path, DemoBenchmarkError)
    return examples


def build_demo(
    data_dir: Path, *, seed: int = DEFAULT_SEED, force: bool = False
) -> DemoBenchmarkPaths:
    """Build (or reuse) the demo benchmark under ``data_dir``."""
    data_dir = Path(data_dir)
    paths = DemoBenchmarkPaths.under(data_dir)
    paths.description_dir.mkdir(parents=True, exist_ok=True)
    outputs = [paths.dev_json, paths.tables_json, paths.database]
    outputs += [paths.description_dir / f"{t.name}.csv" for t in TABLES]
    rebuilt = BUILD.run(
        data_dir,
        {"seed": seed},
        outputs=outputs,
        examples_file=paths.examples_file,
        examples=load_examples,
        write=lambda: _write(paths, seed),
        force=force,
    )
    return DemoBenchmarkPaths.under(data_dir, rebuilt=rebuilt)


def _write(paths: DemoBenchmarkPaths, seed: int) -> None:
    questions = load_questions()
    _write_database(paths.database, synth.generate(seed))
    for table in TABLES:
        write_atomic(paths.description_dir / f"{table.name}.csv", _description_csv(table))
    write_atomic(paths.tables_json, json.dumps([tables_json_entry()], indent=2))
    dev = [dev_entry(i, DEMO_DB_ID, q, difficulty=q.difficulty) for i, q in enumerate(questions)]
    write_atomic(paths.dev_json, json.dumps(dev, indent=2))


def _write_database(path: Path, rows: dict[str, list[tuple]]) -> None:
    with replacing(path) as tmp:
        con = sqlite3.connect(tmp)
        try:
            _fill_database(con, rows)
        finally:
            con.close()


def _fill_database(con: sqlite3.Connection, rows: dict[str, list[tuple]]) -> None:
    con.execute("PRAGMA journal_mode=OFF")  # a scratch file: durability comes from the rename
    with con:
        for table in TABLES:
            con.execute(table.ddl())
        for table in TABLES:
            marks = ", ".join("?" * len(table.columns))
            con.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows[table.name])
        for table in TABLES:
            for statement in table.index_ddl():
                con.execute(statement)
    broken = con.execute("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise DemoBenchmarkError(f"generated rows break foreign keys: {broken[:5]}")


def _description_csv(table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "original_column_name",
            "column_name",
            "column_description",
            "data_format",
            "value_description",
        ]
    )
    for col in table.columns:
        writer.writerow(
            [col.name, col.label, col.description, col.data_format, col.value_description]
        )
    return out.getvalue()


def tables_json_entry() -> dict:
    """The database's entry of BIRD's ``dev_tables.json`` (Spider's tables.json format)."""
    original, readable, types = [[-1, "*"]], [[-1, "*"]], ["text"]
    index: dict[tuple[str, str], int] = {}
    for t_idx, table in enumerate(TABLES):
        for col in table.columns:
            index[(table.name, col.name)] = len(original)
            original.append([t_idx, col.name])
            readable.append([t_idx, col.label])
            types.append(col.data_format)
    primary_keys: list = []
    for table in TABLES:
        ids = [index[(table.name, c)] for c in table.primary_key]
        primary_keys.append(ids[0] if len(ids) == 1 else ids)
    foreign_keys = [
        [index[(table.name, col.name)], index[col.references]]
        for table in TABLES
        for col in table.columns
        if col.references
    ]
    return {
        "db_id": DEMO_DB_ID,
        "table_names_original": [t.name for t in TABLES],
        "table_names": [t.name.replace("_", " ") for t in TABLES],
        "column_names_original": original,
        "column_names": readable,
        "column_types": types,
        "primary_keys": primary_keys,
        "foreign_keys": foreign_keys,
    }
