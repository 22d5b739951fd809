"""A database's own solved examples: a file beside it, and answers its users accepted.

    db.examples, or <stem>.examples.yml beside ─┐
    the database file                          │
    extra(db): e.g. the endpoint's accepted ──┼──► SolvedExample(question, sql, evidence)
      answers in its query log               ─┘        ──► embed questions (once per version)
    question ──► cosine to each example's question ──► the k nearest, as ExampleHit(db_id=db)

Examples on the asking database show its own tables, join paths and value spellings, so they
come before any example from another database (``pipelines/strategies/retrieval.py``).
The file is a YAML or JSON list: the one ``DatabaseRef.examples`` names (``ask --examples``, an
endpoint's registration, a benchmark's server copy keeping its file's), else ``<stem>.examples.yml``
(``.yaml``, ``.json``) or ``examples.yml`` in a database file's folder; a server database
(``postgresql://``) has no folder, so it has examples only where one is named::

    - question: How many members live in Ohio?
      sql: SELECT COUNT(*) FROM members WHERE state = 'OH'
    - question: Which plans were retired?
      evidence: A retired plan has a retired_date.    # optional
      sql: SELECT plan_name FROM plans WHERE retired_date IS NOT NULL

A file whose SQL is written for another engine says so (``{dialect: sqlite, examples: [...]}``;
without it the SQL is the database's own dialect), and its examples are shown translated into the
asking database's (``pipelines/indexing/examples/dialect.py``): a benchmark's server copy shows its
file's examples as PostgreSQL. An unreadable file, an entry without question and SQL, or SQL the
translation cannot read is skipped with a warning.

    >>> own_examples_of(db)          # concert_singer ships none
    ()
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, get_args

import numpy as np
import yaml

from core.types import Frozen
from pipelines.contracts import DatabaseRef, Dialect, ExampleHit
from pipelines.indexing.embedder import embed as embed_texts
from pipelines.indexing.examples.dialect import translated
from pipelines.repair.base import UNREADABLE

log = logging.getLogger(__name__)
SUFFIXES = (".examples.yml", ".examples.yaml", ".examples.json")
FOLDER_FILES = ("examples.yml", "examples.yaml", "examples.json")


class SolvedExample(Frozen):
    """A question on one database with the SQL that answers it."""

    question: str
    sql: str
    evidence: str = ""


def example_files(db: DatabaseRef) -> list[Path]:
    """Where ``db``'s own examples may be, in the order they are looked for."""
    if db.examples is not None:
        return [Path(db.examples).expanduser()]
    if db.dialect == "postgres":
        return []
    database = Path(db.path)
    return [database.parent / (database.stem + s) for s in SUFFIXES] + [
        database.parent / name for name in FOLDER_FILES
    ]


def _parse(path: Path) -> tuple[list[Any], str | None]:
    """The file's entries and the dialect it says its SQL is written in (None: not said)."""
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    dialect = None
    if isinstance(data, dict):  # {dialect: ..., examples: [...]}
        dialect = data.get("dialect")
        data = data.get("examples")
    if not isinstance(data, list):
        raise ValueError("expected a list of {question, sql} entries")
    if dialect is not None and dialect not in get_args(Dialect):
        raise ValueError(f"dialect {dialect!r} is not one of {', '.join(get_args(Dialect))}")
    return data, dialect


@functools.lru_cache(maxsize=32)
def _read(path: str, version: tuple[int, int], dialect: Dialect) -> tuple[SolvedExample, ...]:
    """The examples of the file at ``path`` (``version``: its mtime and size, for the cache),
    their SQL in ``dialect``."""
    entries, written_for = _parse(Path(path))
    out = []
    for i, entry in enumerate(entries):
        if not (isinstance(entry, dict) and entry.get("question") and entry.get("sql")):
            log.warning("%s: entry %d has no question and sql, skipped", path, i)
            continue
        sql = str(entry["sql"]).strip()
        try:
            sql = translated(sql, written_for or dialect, dialect)
        except UNREADABLE as exc:
            log.warning("%s: entry %d is not %s SQL (%s), skipped", path, i, written_for, exc)
            continue
        out.append(
            SolvedExample(
                question=" ".join(str(entry["question"]).split()),
                sql=sql,
                evidence=" ".join(str(entry.get("evidence") or "").split()),
            )
        )
    return tuple(out)


def own_examples_of(db: DatabaseRef) -> tuple[SolvedExample, ...]:
    """The examples of ``db``'s first example file found (none when there is none), in its
    dialect."""
    for path in example_files(db):
        if not path.is_file():
            continue
        try:
            stat = path.stat()
            return _read(str(path), (stat.st_mtime_ns, stat.st_size), db.dialect)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            log.warning("skipping unreadable example file %s: %s", path, exc)
    return ()


Embed = Callable[[Sequence[str]], Any]


class OwnExampleRetriever:
    """The solved examples of the asking database nearest to a question.

    ``extra(db)`` adds examples from elsewhere (the endpoint passes its accepted answers); the
    file's come first when two share a question.
    """

    def __init__(
        self,
        extra: Callable[[DatabaseRef], Sequence[SolvedExample]] | None = None,
        embed: Embed = embed_texts,
    ) -> None:
        self.extra = extra
        self.embed = embed
        self._vectors: dict[tuple, Any] = {}

    def examples(self, db: DatabaseRef) -> tuple[SolvedExample, ...]:
        found = {e.question.lower(): e for e in (self.extra(db) if self.extra else ())}
        found.update({e.question.lower(): e for e in own_examples_of(db)})
        return tuple(found.values())

    def search(self, db: DatabaseRef, question: str, k: int = 3) -> list[ExampleHit]:
        """The ``k`` examples of ``db`` whose questions are nearest to ``question``."""
        examples = self.examples(db)
        if not examples or k < 1:
            return []
        key = (db.path, examples)
        if key not in self._vectors:
            if len(self._vectors) >= 16:  # a sweep over many databases: keep memory bounded
                self._vectors.clear()
            self._vectors[key] = np.asarray(self.embed([e.question for e in examples]))
        scores = self._vectors[key] @ np.asarray(self.embed([question]))[0]
        best = np.argsort(-scores)[:k]
        return [
            ExampleHit(
                question=examples[i].question,
                skeleton="",
                sql=examples[i].sql,
                db_id=db.db_id,
                score=float(scores[i]),
            )
            for i in best
        ]
