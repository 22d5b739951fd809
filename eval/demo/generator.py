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

The build is deterministic (one seeded RNG, fixed dates), atomic (each file is written to a
temporary name in its own folder, then renamed over the old one), idempotent (skipped while the
fingerprint matches) and safe under concurrent callers (a file lock around check-and-build).

``examples.yaml`` holds solved examples that are not test questions; they are written beside the
database, where ``pipelines/indexing/own_examples.py`` finds them. They are not part of the
fingerprint: a changed (or missing) examples file is rewritten on the next call without
regenerating the database.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sqlite3
from pathlib import Path
from typing import Literal, TypeVar

import yaml
from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, ValidationError

from eval.demo import synth
from eval.demo.schema import TABLES
from eval.errors import EvalError
from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation.bird import DESCRIPTION_DIR

GENERATOR_VERSION = 1  # bump when the output format changes without a source change
DEMO_DB_ID = "claims"
DEFAULT_SEED = 7
PACKAGE_DIR = Path(__file__).resolve().parent
QUESTIONS_FILE = PACKAGE_DIR / "questions.yaml"
EXAMPLES_FILE = PACKAGE_DIR / "examples.yaml"
FINGERPRINT_NAME = ".demo_build.json"
LOCK_TIMEOUT_S = 600.0


class DemoBenchmarkError(EvalError):
    """The demo benchmark could not be built or its question file is invalid."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


_M = TypeVar("_M", bound=_Frozen)


class DemoQuestion(_Frozen):
    """One hand-written question of ``questions.yaml``."""

    question: str
    sql: str
    difficulty: Literal["simple", "moderate", "challenging"]
    evidence: str = ""


class DemoExample(DemoQuestion):
    """One solved example of ``examples.yaml``: shown to pipelines, never a test question."""


class DemoBenchmarkPaths(_Frozen):
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
    return _load_entries(path, DemoQuestion, "question")


def load_examples(path: Path = EXAMPLES_FILE) -> tuple[DemoExample, ...]:
    """The solved examples; a malformed file, or one that holds a test question, raises."""
    examples = _load_entries(path, DemoExample, "example")
    tests = load_questions()
    questions = {normalize_question(q.question) for q in tests}
    gold = {_one_line(q.sql) for q in tests}
    for example in examples:
        if normalize_question(example.question) in questions or _one_line(example.sql) in gold:
            raise DemoBenchmarkError(f"{path}: example is a test question: {example.question}")
    return examples


def normalize_question(text: str) -> str:
    """Lower case, punctuation dropped, spaces collapsed: how two questions are compared."""
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())


def _load_entries(path: Path, model: type[_M], kind: str) -> tuple[_M, ...]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DemoBenchmarkError(f"cannot read demo {kind}s {path}: {exc}") from exc
    if not isinstance(raw, list) or not raw:
        raise DemoBenchmarkError(f"{path}: expected a non-empty list of {kind}s")
    try:
        return tuple(model.model_validate(item) for item in raw)
    except ValidationError as exc:
        raise DemoBenchmarkError(f"{path}: invalid {kind}: {exc}") from exc


def examples_text(examples: tuple[DemoExample, ...]) -> str:
    """The examples file beside the database, in the shape ``own_examples`` reads."""
    entries = []
    for e in examples:
        entry = {"question": e.question}
        if e.evidence:
            entry["evidence"] = e.evidence
        entry["sql"] = _one_line(e.sql)
        entries.append(entry)
    header = (
        f"# Solved examples on the {DEMO_DB_ID} database, written by eval/demo/generator.py from\n"
        "# eval/demo/examples.yaml: a pipeline may show them to the model. Never test questions.\n"
    )
    return header + yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=1_000_000)


def fingerprint(seed: int) -> dict:
    """What the build depends on: version, seed, and every generator source and question file."""
    digest = hashlib.sha256()
    sources = sorted(PACKAGE_DIR.rglob("*.py")) + [QUESTIONS_FILE]
    for source in sources:
        digest.update(source.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
        digest.update(source.read_bytes() + b"\0")
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "sources_sha256": digest.hexdigest(),
    }


def build_demo(
    data_dir: Path, *, seed: int = DEFAULT_SEED, force: bool = False
) -> DemoBenchmarkPaths:
    """Build (or reuse) the demo benchmark under ``data_dir``."""
    data_dir = Path(data_dir)
    paths = DemoBenchmarkPaths.under(data_dir)
    paths.description_dir.mkdir(parents=True, exist_ok=True)
    wanted = fingerprint(seed)
    try:
        with FileLock(str(data_dir / ".demo_build.lock"), timeout=LOCK_TIMEOUT_S):
            if not force and _up_to_date(paths, wanted):
                _refresh_examples(paths)  # cheap: the database stays as it is
                return paths
            _build(paths, seed, wanted)
    except Timeout as exc:
        raise DemoBenchmarkError(
            f"another process holds the demo build lock in {data_dir}"
        ) from exc
    return DemoBenchmarkPaths.under(data_dir, rebuilt=True)


def _up_to_date(paths: DemoBenchmarkPaths, wanted: dict) -> bool:
    stamp = paths.data_dir / FINGERPRINT_NAME
    outputs = [paths.dev_json, paths.tables_json, paths.database]
    outputs += [paths.description_dir / f"{t.name}.csv" for t in TABLES]
    try:
        return json.loads(stamp.read_text()) == wanted and all(p.is_file() for p in outputs)
    except (OSError, ValueError):
        return False


def _refresh_examples(paths: DemoBenchmarkPaths) -> None:
    """Write the examples file beside the database unless it already says the same."""
    text = examples_text(load_examples())
    try:
        if paths.examples_file.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    _write_atomic(paths.examples_file, text)


def _build(paths: DemoBenchmarkPaths, seed: int, wanted: dict) -> None:
    stamp = paths.data_dir / FINGERPRINT_NAME
    stamp.unlink(missing_ok=True)  # a build that dies half-way is never mistaken for a complete one
    for stale in paths.data_dir.rglob(".*.tmp"):  # left by a crashed builder; we hold the lock
        stale.unlink()
    questions = load_questions()
    examples = load_examples()  # a bad examples file fails before the slow part
    _write_database(paths.database, synth.generate(seed))
    for table in TABLES:
        _write_atomic(paths.description_dir / f"{table.name}.csv", _description_csv(table))
    _write_atomic(paths.tables_json, json.dumps([tables_json_entry()], indent=2))
    dev = [
        {
            "question_id": i,
            "db_id": DEMO_DB_ID,
            "question": q.question,
            "evidence": q.evidence,
            "SQL": _one_line(q.sql),
            "difficulty": q.difficulty,
        }
        for i, q in enumerate(questions)
    ]
    _write_atomic(paths.dev_json, json.dumps(dev, indent=2))
    _write_atomic(paths.examples_file, examples_text(examples))
    _write_atomic(stamp, json.dumps(wanted, indent=2))


def _one_line(sql: str) -> str:
    # BIRD keeps gold SQL on one line; only line breaks and indentation go, never spaces in literals.
    return " ".join(line.strip() for line in sql.strip().splitlines() if line.strip())


def _temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_atomic(path: Path, text: str) -> None:
    tmp = _temp_name(path)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_database(path: Path, rows: dict[str, list[tuple]]) -> None:
    tmp = _temp_name(path)
    try:
        con = sqlite3.connect(tmp)
        try:
            _fill_database(con, rows)
        finally:
            con.close()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


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
