"""Build the enterprise work-item benchmark on disk: a DuckDB database and its question file.

    paths = build_enterprise(Path(".cache/enterprise"))    # ~10 s the first time, then instant
    paths.database      # .cache/enterprise/dev_databases/workitems/workitems.duckdb
    paths.dev_json      # [{question_id, db_id, question, evidence, SQL, difficulty,
                        #   persona, sds, sds_total, constructs, construct}]
                        # construct: the floor question's construct (floor_construct), else null

Layout written under ``data_dir``::

    dev.json
    dev_databases/workitems/workitems.duckdb              tables, keys and COMMENT ON documentation
    dev_databases/workitems/workitems.examples.yml        the database's own solved examples
    .enterprise_build.json                                fingerprint: seed, scale, sources digest

Deterministic (one seeded RNG, fixed dates), atomic, idempotent and safe under concurrent callers,
by the machinery ``eval/embedded_benchmark.py`` shares with the claims demo. The examples are not
part of the fingerprint: a changed or missing examples file is rewritten without regenerating the
database.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from core.types import Frozen
from eval.embedded_benchmark import EmbeddedBuild, dev_entry, replacing, write_atomic
from eval.enterprise import synth
from eval.enterprise.questions import (
    PACKAGE_DIR,
    EnterpriseBenchmarkError,
    load_examples,
    load_questions,
)
from eval.enterprise.schema import TABLES, Table
from eval.enterprise.synth.common import Row
from pipelines.contracts import DatabaseRef

ENTERPRISE_DB_ID = "workitems"
DEFAULT_SEED = 11
BUILD = EmbeddedBuild(
    name="enterprise",
    db_id=ENTERPRISE_DB_ID,
    package_dir=PACKAGE_DIR,
    generator_version=2,  # bump when the output format changes without a source change
    error=EnterpriseBenchmarkError,
    dialect="duckdb",
)
FINGERPRINT_NAME = BUILD.fingerprint_name


class EnterprisePaths(Frozen):
    """Where the built benchmark lives; ``rebuilt`` says whether this call wrote it."""

    data_dir: Path
    dev_json: Path
    database: Path
    examples_file: Path
    db_id: str = ENTERPRISE_DB_ID
    rebuilt: bool = False

    @classmethod
    def under(cls, data_dir: Path, *, rebuilt: bool = False) -> EnterprisePaths:
        db_dir = data_dir / "dev_databases" / ENTERPRISE_DB_ID
        return cls(
            data_dir=data_dir,
            dev_json=data_dir / "dev.json",
            database=db_dir / f"{ENTERPRISE_DB_ID}.duckdb",
            examples_file=db_dir / f"{ENTERPRISE_DB_ID}.examples.yml",
            rebuilt=rebuilt,
        )

    def database_ref(self) -> DatabaseRef:
        return DatabaseRef(db_id=self.db_id, path=str(self.database), dialect="duckdb")


def build_enterprise(
    data_dir: Path,
    *,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    force: bool = False,
    progress: bool = False,
) -> EnterprisePaths:
    """Build (or reuse) the benchmark under ``data_dir``; ``progress`` shows a bar on stderr."""
    data_dir = Path(data_dir)
    paths = EnterprisePaths.under(data_dir)
    paths.database.parent.mkdir(parents=True, exist_ok=True)
    rebuilt = BUILD.run(
        data_dir,
        {"seed": seed, "scale": scale},
        outputs=[paths.dev_json, paths.database],
        examples_file=paths.examples_file,
        examples=load_examples,
        write=lambda: _write(paths, seed, scale, progress),
        force=force,
    )
    return EnterprisePaths.under(data_dir, rebuilt=rebuilt)


def _write(paths: EnterprisePaths, seed: int, scale: float, progress: bool) -> None:
    questions = load_questions()
    with Progress(
        TextColumn("[bold]enterprise benchmark[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=not progress,
    ) as bar:
        task = bar.add_task("generating", total=len(synth.STAGES) + len(TABLES) + 1)

        def advance(done: str) -> None:
            bar.update(task, advance=1, description=done)

        rows = synth.generate(seed, scale, step=advance)
        _write_database(paths.database, rows, advance)
        dev = [
            dev_entry(
                i,
                ENTERPRISE_DB_ID,
                q,
                difficulty=q.difficulty,
                persona=q.persona,
                sds=q.sds.model_dump(),
                sds_total=q.sds_total,
                constructs=list(q.constructs),
                construct=q.floor_construct,
            )
            for i, q in enumerate(questions)
        ]
        write_atomic(paths.dev_json, json.dumps(dev, indent=2))
        advance("done")


def _write_database(path: Path, rows: dict[str, list[Row]], advance: Callable[[str], None]) -> None:
    with replacing(path) as tmp:
        con = duckdb.connect(str(tmp))
        try:
            for table in TABLES:
                con.execute(table.ddl())
                schema = con.sql(f"SELECT * FROM {table.name} LIMIT 0").to_arrow_table().schema
                for wave in _parents_first(table, rows[table.name]):
                    con.register("incoming", pa.Table.from_pylist(wave, schema=schema))
                    con.execute(f"INSERT INTO {table.name} SELECT * FROM incoming")
                    con.unregister("incoming")
                advance(table.name)
            for table in TABLES:
                for statement in table.comments():
                    con.execute(statement)
            con.execute("CHECKPOINT")
        finally:
            con.close()
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


def _parents_first(table: Table, rows: list[Row]) -> list[list[Row]]:
    """``rows`` in waves whose every row's parent is in an earlier wave: DuckDB checks a foreign
    key against the rows already in the table, not those of the same INSERT."""
    column = table.self_reference
    if column is None:
        return [rows]
    key = table.primary_key[0]
    inserted: set[str] = set()
    waves, left = [], rows
    while left:
        wave = [r for r in left if r[column] is None or r[column] in inserted]
        if not wave:
            raise EnterpriseBenchmarkError(f"{table.name}.{column} has a cycle")
        waves.append(wave)
        inserted.update(r[key] for r in wave)
        left = [r for r in left if r[key] not in inserted]
    return waves
