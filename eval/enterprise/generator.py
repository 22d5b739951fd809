"""Build the enterprise work-item benchmark on disk: a DuckDB database and its question file.

    paths = build_enterprise(Path(".cache/enterprise"))    # ~10 s the first time, then instant
    paths.database      # .cache/enterprise/dev_databases/workitems/workitems.duckdb
    paths.dev_json      # [{question_id, db_id, question, evidence, SQL, difficulty,
                        #   persona, sds, sds_total, constructs}]

Layout written under ``data_dir``::

    dev.json
    dev_databases/workitems/workitems.duckdb              tables, keys and COMMENT ON documentation
    dev_databases/workitems/workitems.examples.yml        the database's own solved examples
    .enterprise_build.json                                fingerprint: seed, scale, sources digest

As the claims demo (``eval/demo/generator.py``): deterministic (one seeded RNG, fixed dates),
atomic (each file written under a temporary name in its folder, then renamed over the old one),
idempotent (skipped while the fingerprint matches) and safe under concurrent callers (a file lock
around check-and-build). The examples are not part of the fingerprint: a changed or missing
examples file is rewritten without regenerating the database.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import yaml
from filelock import FileLock, Timeout
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from core.types import Frozen
from eval.enterprise import synth
from eval.enterprise.questions import (
    PACKAGE_DIR,
    QUESTIONS_FILE,
    EnterpriseBenchmarkError,
    EnterpriseExample,
    load_examples,
    load_questions,
    one_line,
)
from eval.enterprise.schema import TABLES, Table
from eval.enterprise.synth.common import Row
from pipelines.contracts import DatabaseRef

GENERATOR_VERSION = 1  # bump when the output format changes without a source change
ENTERPRISE_DB_ID = "workitems"
DEFAULT_SEED = 11
FINGERPRINT_NAME = ".enterprise_build.json"
LOCK_TIMEOUT_S = 600.0


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


def fingerprint(seed: int, scale: float) -> dict:
    """What the build depends on: version, seed, scale, every generator source and the questions."""
    digest = hashlib.sha256()
    for source in sorted(PACKAGE_DIR.rglob("*.py")) + [QUESTIONS_FILE]:
        digest.update(source.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
        digest.update(source.read_bytes() + b"\0")
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "scale": scale,
        "sources_sha256": digest.hexdigest(),
    }


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
    wanted = fingerprint(seed, scale)
    try:
        with FileLock(str(data_dir / ".enterprise_build.lock"), timeout=LOCK_TIMEOUT_S):
            if not force and _up_to_date(paths, wanted):
                _refresh_examples(paths)  # cheap: the database stays as it is
                return paths
            _build(paths, seed, scale, wanted, progress)
    except Timeout as exc:
        raise EnterpriseBenchmarkError(
            f"another process holds the enterprise build lock in {data_dir}"
        ) from exc
    return EnterprisePaths.under(data_dir, rebuilt=True)


def _up_to_date(paths: EnterprisePaths, wanted: dict) -> bool:
    stamp = paths.data_dir / FINGERPRINT_NAME
    try:
        return (
            json.loads(stamp.read_text()) == wanted
            and paths.dev_json.is_file()
            and paths.database.is_file()
        )
    except (OSError, ValueError):
        return False


def _build(paths: EnterprisePaths, seed: int, scale: float, wanted: dict, progress: bool) -> None:
    stamp = paths.data_dir / FINGERPRINT_NAME
    stamp.unlink(missing_ok=True)  # a build that dies half-way is never mistaken for a complete one
    for stale in paths.data_dir.rglob(".*.tmp*"):  # left by a crashed builder (and DuckDB's WAL)
        stale.unlink()
    questions = load_questions()
    examples = load_examples()  # a bad examples file fails before the slow part
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
            {
                "question_id": i,
                "db_id": ENTERPRISE_DB_ID,
                "question": q.question,
                "evidence": q.evidence,
                "SQL": one_line(q.sql),
                "difficulty": q.difficulty,
                "persona": q.persona,
                "sds": q.sds.model_dump(),
                "sds_total": q.sds_total,
                "constructs": list(q.constructs),
            }
            for i, q in enumerate(questions)
        ]
        _write_atomic(paths.dev_json, json.dumps(dev, indent=2))
        _write_atomic(paths.examples_file, examples_text(examples))
        _write_atomic(stamp, json.dumps(wanted, indent=2))
        advance("done")


def examples_text(examples: tuple[EnterpriseExample, ...]) -> str:
    """The examples file beside the database, in the shape ``own_examples`` reads."""
    entries = []
    for e in examples:
        entry = {"question": e.question}
        if e.evidence:
            entry["evidence"] = e.evidence
        entry["sql"] = one_line(e.sql)
        entries.append(entry)
    header = (
        f"# Solved examples on the {ENTERPRISE_DB_ID} database, written by "
        "eval/enterprise/generator.py from\n"
        "# eval/enterprise/examples.yaml: a pipeline may show them to the model. Never test questions.\n"
    )
    return header + yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=1_000_000)


def _refresh_examples(paths: EnterprisePaths) -> None:
    """Write the examples file beside the database unless it already says the same."""
    text = examples_text(load_examples())
    try:
        if paths.examples_file.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    _write_atomic(paths.examples_file, text)


def _temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_atomic(path: Path, text: str) -> None:
    tmp = _temp_name(path)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_database(path: Path, rows: dict[str, list[Row]], advance: Callable[[str], None]) -> None:
    tmp = _temp_name(path)
    wal = tmp.with_name(tmp.name + ".wal")
    try:
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
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        wal.unlink(missing_ok=True)


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
