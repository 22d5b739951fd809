"""The build machinery of the embedded benchmarks: ``eval/demo`` (claims on SQLite) and
``eval/enterprise`` (work items on DuckDB). Each package keeps its schema, its data and the
writing of its database; this module holds what both do the same way.

    BUILD = EmbeddedBuild(name="demo", db_id="claims", package_dir=PACKAGE_DIR,
                          generator_version=1, error=DemoBenchmarkError)
    load_entries(QUESTIONS_FILE, DemoQuestion, benchmark="demo", kind="question",
                 error=DemoBenchmarkError)                 # the questions, validated
    rebuilt = BUILD.run(data_dir, {"seed": 7}, outputs=[...], examples_file=...,
                        examples=load_examples, write=..., force=False)

Each package's generator is deterministic (one seeded RNG, fixed dates); this module makes the
build

- atomic: each file is written under a temporary name in its own folder (``.<file>.<pid>.tmp``),
  then renamed over the old one;
- idempotent: skipped while the fingerprint ``<data_dir>/.<name>_build.json`` (generator version,
  the build's settings such as seed and scale, a SHA-256 over the package's Python sources, its
  ``questions.yaml`` and this module) matches and every output is there;
- safe under concurrent callers: a file lock ``<data_dir>/.<name>_build.lock`` around
  check-and-build.

``examples.yaml`` holds solved examples that are no test question; they are written beside the
database as ``<db_id>.examples.yml``, where ``pipelines/indexing/examples/own_examples.py`` finds them. They
are not part of the fingerprint: a changed or missing examples file is rewritten on the next call
without regenerating the database.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml
from filelock import FileLock, Timeout
from pydantic import ValidationError

from core.types import Frozen
from eval.errors import EvalError
from pipelines.contracts import Dialect

LOCK_TIMEOUT_S = 600.0
_SOURCE = Path(__file__).resolve()
_REPO = _SOURCE.parents[1]


class SolvedQuestion(Frozen):
    """A question with the SQL that answers it: the shape of every entry of a benchmark's
    ``questions.yaml`` and ``examples.yaml``, each of which adds its own fields."""

    question: str
    sql: str
    evidence: str = ""


_Q = TypeVar("_Q", bound=SolvedQuestion)


def one_line(sql: str) -> str:
    """SQL on one line (BIRD's files keep one query per line); spaces inside literals stay."""
    return " ".join(line.strip() for line in sql.strip().splitlines() if line.strip())


def normalize_question(text: str) -> str:
    """Lower case, punctuation dropped, spaces collapsed: how two questions are compared."""
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())


def load_entries(
    path: Path, model: type[_Q], *, benchmark: str, kind: str, error: type[EvalError]
) -> tuple[_Q, ...]:
    """The entries of the YAML list at ``path``, each a ``model``; an unreadable file, an empty
    one or an invalid entry raises ``error`` (``benchmark`` and ``kind`` name what was read)."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise error(f"cannot read {benchmark} {kind}s {path}: {exc}") from exc
    if not isinstance(raw, list) or not raw:
        raise error(f"{path}: expected a non-empty list of {kind}s")
    try:
        return tuple(model.model_validate(item) for item in raw)
    except ValidationError as exc:
        raise error(f"{path}: invalid {kind}: {exc}") from exc


def refuse_test_questions(
    examples: Sequence[SolvedQuestion],
    tests: Sequence[SolvedQuestion],
    path: Path,
    error: type[EvalError],
) -> None:
    """Raise ``error`` if an example of ``path`` is one of ``tests``: the same question once
    normalized, or the same SQL on one line."""
    questions = {normalize_question(q.question) for q in tests}
    gold = {one_line(q.sql) for q in tests}
    for example in examples:
        if normalize_question(example.question) in questions or one_line(example.sql) in gold:
            raise error(f"{path}: example is a test question: {example.question}")


def dev_entry(index: int, db_id: str, question: SolvedQuestion, **fields: Any) -> dict[str, Any]:
    """One record of ``dev.json`` in BIRD's fields, the gold SQL on one line, then ``fields``."""
    return {
        "question_id": index,
        "db_id": db_id,
        "question": question.question,
        "evidence": question.evidence,
        "SQL": one_line(question.sql),
        **fields,
    }


def create_table(
    name: str,
    columns: Iterable[tuple[str, str, bool, tuple[str, str] | None]],
    primary_key: Sequence[str],
    unique: Sequence[Sequence[str]] = (),
) -> str:
    """The ``CREATE TABLE`` of an embedded table, one line each: its columns as ``(name, type,
    not null, (table, column) referenced or None)``, the primary key, the unique keys, then a
    foreign key per referencing column.

    >>> print(create_table("t", [("id", "INTEGER", True, None), ("p", "TEXT", False, ("p", "id"))],
    ...                    ["id"]))
    CREATE TABLE t (
        id INTEGER NOT NULL,
        p TEXT,
        PRIMARY KEY (id),
        FOREIGN KEY (p) REFERENCES p (id)
    )
    """
    columns = list(columns)
    lines = [
        f"    {col} {kind}{' NOT NULL' if not_null else ''}" for col, kind, not_null, _ in columns
    ]
    lines.append(f"    PRIMARY KEY ({', '.join(primary_key)})")
    lines += [f"    UNIQUE ({', '.join(cols)})" for cols in unique]
    lines += [
        f"    FOREIGN KEY ({col}) REFERENCES {ref[0]} ({ref[1]})"
        for col, _, _, ref in columns
        if ref
    ]
    return f"CREATE TABLE {name} (\n" + ",\n".join(lines) + "\n)"


def temp_name(path: Path) -> Path:
    """Where this process writes ``path`` before renaming it into place."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary name beside ``path`` to write to: renamed over ``path`` when the block ends
    without an error, removed when it raises."""
    tmp = temp_name(path)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> None:
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


class EmbeddedBuild(Frozen):
    """One embedded benchmark's build: what names its files and what its fingerprint covers."""

    name: str  # "demo": names the fingerprint and lock files and the error messages
    db_id: str
    package_dir: Path  # its *.py files and questions.yaml are digested into the fingerprint
    generator_version: int  # bumped when the output format changes without a source change
    error: type[EvalError]
    dialect: Dialect  # the database's engine, in which its examples' SQL is written

    @property
    def fingerprint_name(self) -> str:
        return f".{self.name}_build.json"

    def fingerprint(self, settings: dict[str, Any]) -> dict[str, Any]:
        """What the build depends on: version, ``settings`` (seed, scale), and a digest of the
        package's Python sources, its ``questions.yaml`` and this module."""
        digest = hashlib.sha256()
        sources = sorted(self.package_dir.rglob("*.py")) + [self.package_dir / "questions.yaml"]
        named = [(s.relative_to(self.package_dir).as_posix(), s) for s in sources]
        for label, source in [*named, (_SOURCE.relative_to(_REPO).as_posix(), _SOURCE)]:
            digest.update(label.encode() + b"\0")
            digest.update(source.read_bytes() + b"\0")
        return {
            "generator_version": self.generator_version,
            **settings,
            "sources_sha256": digest.hexdigest(),
        }

    def examples_text(self, examples: Sequence[SolvedQuestion]) -> str:
        """The examples file beside the database, in the shape ``own_examples`` reads: it says
        its SQL's dialect, so a copy of the database on another engine shows them translated."""
        entries = []
        for e in examples:
            entry = {"question": e.question}
            if e.evidence:
                entry["evidence"] = e.evidence
            entry["sql"] = one_line(e.sql)
            entries.append(entry)
        package = self.package_dir.relative_to(_REPO).as_posix()
        header = (
            f"# Solved examples on the {self.db_id} database, written by {package}/generator.py "
            f"from\n# {package}/examples.yaml: a pipeline may show them to the model. "
            "Never test questions.\n"
        )
        return header + yaml.safe_dump(
            {"dialect": self.dialect, "examples": entries},
            sort_keys=False,
            allow_unicode=True,
            width=1_000_000,
        )

    def run(
        self,
        data_dir: Path,
        settings: dict[str, Any],
        *,
        outputs: Sequence[Path],
        examples_file: Path,
        examples: Callable[[], Sequence[SolvedQuestion]],
        write: Callable[[], None],
        force: bool,
    ) -> bool:
        """Build under the lock in ``data_dir`` (which exists); True when this call built.

        While the stored fingerprint matches ``settings`` and every one of ``outputs`` is a file,
        and not ``force``, only a stale or missing ``examples_file`` is rewritten. Otherwise
        ``write`` writes ``outputs``, then ``examples()`` go to ``examples_file`` and the
        fingerprint is written last.
        """
        wanted = self.fingerprint(settings)
        stamp = data_dir / self.fingerprint_name
        try:
            with FileLock(str(data_dir / f".{self.name}_build.lock"), timeout=LOCK_TIMEOUT_S):
                if not force and _up_to_date(stamp, wanted, outputs):
                    _refresh(examples_file, self.examples_text(examples()))
                    return False
                # A build that dies half-way is never mistaken for a complete one.
                stamp.unlink(missing_ok=True)
                # Left by a crashed builder (DuckDB's WAL too); this process holds the lock.
                for stale in data_dir.rglob(".*.tmp*"):
                    stale.unlink()
                # A bad examples file fails before the slow part.
                text = self.examples_text(examples())
                write()
                write_atomic(examples_file, text)
                write_atomic(stamp, json.dumps(wanted, indent=2))
        except Timeout as exc:
            raise self.error(
                f"another process holds the {self.name} build lock in {data_dir}"
            ) from exc
        return True


def _up_to_date(stamp: Path, wanted: dict[str, Any], outputs: Sequence[Path]) -> bool:
    try:
        return json.loads(stamp.read_text()) == wanted and all(p.is_file() for p in outputs)
    except (OSError, ValueError):
        return False


def _refresh(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless the file already says the same (the database stays)."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    write_atomic(path, text)
