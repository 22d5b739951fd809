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

An unreadable file or an entry without question and SQL is skipped with a warning.

    >>> own_examples_of(db)          # concert_singer ships none
    ()
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from core.types import Frozen
from pipelines.contracts import DatabaseRef, ExampleHit
from pipelines.indexing.embedder import embed as embed_texts

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


def _parse(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if isinstance(data, dict):  # {examples: [...]}
        data = data.get("examples")
    if not isinstance(data, list):
        raise ValueError("expected a list of {question, sql} entries")
    return data


@functools.lru_cache(maxsize=32)
def _read(path: str, mtime: float) -> tuple[SolvedExample, ...]:
    out = []
    for i, entry in enumerate(_parse(Path(path))):
        if isinstance(entry, dict) and entry.get("question") and entry.get("sql"):
            out.append(
                SolvedExample(
                    question=" ".join(str(entry["question"]).split()),
                    sql=str(entry["sql"]).strip(),
                    evidence=" ".join(str(entry.get("evidence") or "").split()),
                )
            )
        else:
            log.warning("%s: entry %d has no question and sql, skipped", path, i)
    return tuple(out)


def own_examples_of(db: DatabaseRef) -> tuple[SolvedExample, ...]:
    """The examples of ``db``'s first example file found (none when there is none)."""
    for path in example_files(db):
        if not path.is_file():
            continue
        try:
            return _read(str(path), path.stat().st_mtime)
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
