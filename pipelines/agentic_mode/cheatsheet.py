"""The dynamic cheatsheet: transferable rules distilled from classified errors, kept per
database across questions and runs; the best of them go into the generator's prompt.

    Finding ──record──► the class's ``rule`` template (taxonomy.yaml) + the finding's
                        identifier / suggestion / detail, sanitised ──► CheatsheetRule
            ──upsert by key under a file lock──► <root>/<db_id>-<sha1(db path)[:8]>.json
    before each generation: top(k) ──render──► "Rules learned on this database:\\n- ..."

A rule's key is its class and, when the template names ``{identifier}`` or ``{detail}``, the
normalised identifier: a class whose rule names neither keeps one rule. Rules rank by
``fixed`` (later attempts on the question no longer met it), then ``seen``, then recency.
``learn=False`` freezes the sheet (read, never written): a held-out run is measured on what
the tuning run learned and learns nothing from the questions it is measured on.

    >>> import tempfile
    >>> from pipelines.settings import CheatsheetSettings
    >>> sheet = Cheatsheet.open(CheatsheetSettings(root=tempfile.mkdtemp()), db)
    >>> finding = load_taxonomy().finding(
    ...     "column_not_found", source="sqlite", detail="no such column: nme", identifier="nme"
    ... )
    >>> sheet.record(finding).text                      # no suggestion: that sentence is left out
    'There is no column nme: use only columns listed under their table.'
    >>> sheet.record(finding, fixed=True).seen, len(sheet.rules())
    (2, 1)
    >>> print(sheet.render())
    Rules learned on this database:
    - There is no column nme: use only columns listed under their table.
"""

from __future__ import annotations

import hashlib
import os
import re
import string
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import Field, ValidationError

from core.types import Frozen
from pipelines.agentic_mode.errors import CheatsheetError
from pipelines.agentic_mode.taxonomy import Finding, Taxonomy, load_taxonomy
from pipelines.contracts import DatabaseRef
from pipelines.settings import CheatsheetSettings

RULE_CHARS = 240
HEADING = "Rules learned on this database:"
# Characters no substituted value keeps: a line break would start a line of its own in the
# prompt, a backtick a code fence, <|...|> a chat template's token, a brace a later format().
_UNSAFE = re.compile(r"[\x00-\x1f\x7f`{}<>|\\]")
_QUOTES = re.compile(r"[\"'`\[\]]")
# A template's sentences end with a period before whitespace ("x.field" stays whole).
_SENTENCE_END = re.compile(r"(?<=\.)\s+")
# Per value, so one long candidate list cannot crowd the rule out of its 240 characters.
_VALUE_CHARS = {"identifier": 80, "suggestion": 100, "detail": 140}
_LOCK_TIMEOUT_S = 60.0


class CheatsheetRule(Frozen):
    """One learned rule of one database."""

    key: str  # dedup key: error class + normalised identifier
    error_class: str
    text: str = Field(min_length=1, max_length=RULE_CHARS, pattern=r"^[^\n]*$")
    seen: int = Field(default=1, ge=1)  # times the class + identifier was met
    fixed: int = Field(default=0, ge=0)  # times a later attempt on the question no longer met it
    last_seen: str  # ISO-8601 UTC


class _SheetFile(Frozen):
    db_id: str
    db_path: str
    rules: tuple[CheatsheetRule, ...] = ()


def sheet_file(root: str | Path, db: DatabaseRef) -> Path:
    """``<root>/<db_id>-<8 hex>.json``: the hash of the resolved path tells apart two
    benchmarks' databases of the same id."""
    return Path(root) / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', db.db_id)}-{path_digest(db.path)}.json"


def path_digest(path: str | Path) -> str:
    """The 8 hex digits a database file's sheet name ends with."""
    return hashlib.sha1(str(Path(path).expanduser().resolve()).encode()).hexdigest()[:8]


def rule_text(template: str, finding: Finding) -> str | None:
    """``template`` filled with the finding's sanitised fields, one line of at most 240
    characters. A sentence naming a field the finding leaves empty is left out (so ``Closest:
    {suggestion}.`` goes when nothing is offered); None when no sentence is left."""
    values = {
        name: _clip(" ".join(_UNSAFE.sub(" ", getattr(finding, name)).split()), limit)
        for name, limit in _VALUE_CHARS.items()
    }
    kept = [
        sentence.format_map(values)
        for sentence in _SENTENCE_END.split(template.strip())
        if all(values[name] for name in _placeholders(sentence))
    ]
    return _clip(" ".join(" ".join(kept).split()), RULE_CHARS) if kept else None


def rule_key(template: str, finding: Finding) -> str:
    """The class, and the normalised identifier when the rule depends on the finding."""
    if not _placeholders(template) & {"identifier", "detail"}:
        return finding.error_class
    name = " ".join(_QUOTES.sub("", _UNSAFE.sub(" ", finding.identifier)).split()).casefold()
    return f"{finding.error_class}:{_clip(name, _VALUE_CHARS['identifier'])}"


def ranked(rules: list[CheatsheetRule] | tuple[CheatsheetRule, ...]) -> tuple[CheatsheetRule, ...]:
    """Best first: most fixed, then most seen, then most recent (then by key, for a stable
    order)."""
    return tuple(sorted(rules, key=lambda r: (r.fixed, r.seen, r.last_seen, r.key), reverse=True))


class Cheatsheet:
    """One database's rules in one file (module docstring). Reads take no lock (the file is
    replaced whole); ``record`` and ``reset`` read, change and write it under ``<file>.lock``,
    so concurrent workers lose no update. Blocking file I/O of a few milliseconds."""

    def __init__(
        self,
        settings: CheatsheetSettings,
        path: Path | None,
        db: DatabaseRef | None = None,
        taxonomy: Taxonomy | None = None,
    ) -> None:
        self.settings = settings
        self.path = path  # None: no cheatsheet (settings.root is None)
        self._db = db  # None for a sheet found on disk (``stored``): the file names its database
        self._taxonomy = taxonomy

    @classmethod
    def open(
        cls, settings: CheatsheetSettings, db: DatabaseRef, taxonomy: Taxonomy | None = None
    ) -> Cheatsheet:
        """``db``'s sheet under ``settings.root`` (nothing is read until asked)."""
        path = sheet_file(settings.root, db) if settings.root is not None else None
        return cls(settings, path, db, taxonomy)

    @classmethod
    def stored(cls, settings: CheatsheetSettings) -> tuple[Cheatsheet, ...]:
        """Every sheet file under ``settings.root``, by file name."""
        if settings.root is None or not Path(settings.root).is_dir():
            return ()
        return tuple(cls(settings, path) for path in sorted(Path(settings.root).glob("*.json")))

    @property
    def taxonomy(self) -> Taxonomy:
        if self._taxonomy is None:
            self._taxonomy = load_taxonomy()
        return self._taxonomy

    def rules(self) -> tuple[CheatsheetRule, ...]:
        """All rules, ranked best first; () when there is no file yet."""
        stored = self._read()
        return ranked(stored.rules) if stored else ()

    def top(self, k: int | None = None) -> tuple[CheatsheetRule, ...]:
        """The ``k`` best rules (default ``settings.top_k``)."""
        return self.rules()[: self.settings.top_k if k is None else k]

    def render(self, k: int | None = None) -> str:
        """The ``k`` best rules as a block for the generator's prompt; "" when there is none."""
        best = self.top(k)
        return "\n".join([HEADING, *(f"- {rule.text}" for rule in best)]) if best else ""

    def record(self, finding: Finding, *, fixed: bool = False) -> CheatsheetRule | None:
        """Learn from one finding met on a question: one call per finding, once a later
        attempt has shown whether it was ``fixed``. The rule as stored; None when nothing is
        learned (no root, ``learn=False``, a class without a rule template, an empty rule)."""
        if self.path is None or not self.settings.learn:
            return None
        template = self.taxonomy[finding.error_class].rule
        text = rule_text(template, finding) if template is not None else None
        if template is None or text is None:
            return None
        key = rule_key(template, finding)
        with self._lock():
            stored = self._read()
            rules = list(stored.rules) if stored else []
            old = next((r for r in rules if r.key == key), None)
            rule = CheatsheetRule(
                key=key,
                error_class=finding.error_class,
                # the newest wording, but a finding without candidates keeps the one that may
                # name them
                text=old.text if old and not finding.suggestion else text,
                seen=(old.seen if old else 0) + 1,
                fixed=(old.fixed if old else 0) + int(fixed),
                last_seen=datetime.now(UTC).isoformat(timespec="microseconds"),
            )
            # The rule just recorded always stays, so a full sheet still learns new rules.
            others = ranked([r for r in rules if r.key != key])[: self.settings.max_rules - 1]
            db_id, db_path = self._database(stored)
            self._write(_SheetFile(db_id=db_id, db_path=db_path, rules=ranked([rule, *others])))
        return rule

    def reset(self) -> int:
        """Remove the file, even a corrupt one; how many rules it held (0: none, or corrupt).
        An explicit act, so a frozen (``learn=False``) sheet is removed too."""
        if self.path is None:
            return 0
        with self._lock():
            try:
                stored = self._read()
            except CheatsheetError:
                stored = None
            held = len(stored.rules) if stored else 0
            self.path.unlink(missing_ok=True)
        return held

    def export(self) -> list[dict]:
        """The rules, ranked, as JSON-able dicts."""
        return [rule.model_dump(mode="json") for rule in self.rules()]

    def database(self) -> tuple[str, str]:
        """``(db_id, db_path)``: the database's, or for a stored sheet what its file says."""
        return self._database(self._read())

    def _database(self, stored: _SheetFile | None) -> tuple[str, str]:
        if self._db is not None:
            return self._db.db_id, str(Path(self._db.path).expanduser().resolve())
        if stored is None:  # a stored sheet removed since it was listed
            return self.path.stem.rsplit("-", 1)[0], ""
        return stored.db_id, stored.db_path

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(f"{self.path}.lock", timeout=_LOCK_TIMEOUT_S)
        try:
            lock.acquire()
        except Timeout as exc:
            raise CheatsheetError(
                f"the cheatsheet lock {lock.lock_file} was held for over {_LOCK_TIMEOUT_S:.0f} s"
            ) from exc
        try:
            yield
        finally:
            lock.release()

    def _read(self) -> _SheetFile | None:
        if self.path is None:
            return None
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CheatsheetError(f"cannot read the cheatsheet {self.path}: {exc}") from exc
        try:
            return _SheetFile.model_validate_json(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "file"
            raise CheatsheetError(
                f"the cheatsheet {self.path} is corrupt ({where}: {first['msg']}); its rules "
                "are kept as they are: repair the file, or remove it with "
                "`scale-analytics cheatsheet reset`"
            ) from exc

    def _write(self, sheet: _SheetFile) -> None:
        # A reader sees the old file or the new one, never half of one.
        staged = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            with staged.open("w", encoding="utf-8") as out:
                out.write(sheet.model_dump_json(indent=2))
                out.flush()
                os.fsync(out.fileno())
            os.replace(staged, self.path)
        except BaseException:
            staged.unlink(missing_ok=True)
            raise


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
