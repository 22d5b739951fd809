"""The error taxonomy of the agentic mode: every failure a candidate SQL can meet — a checker's
finding, an engine's error message, an answer's shape — is one class of a YAML file, with the
corrective action it calls for and a repair directive for the generator.

    taxonomy.yaml ──load_taxonomy──► Taxonomy(classes: FailureClass...) ──finding(name, ...)──► Finding

Each class sits on two axes: the **phase** where the failure shows (``schema_coverage``,
``nested_type``, ``syntax_dialect``, ``runtime``, ``semantic``) and the **action** that corrects
it (``expand_schema``: the generator lacked schema context, show it more; ``repair_in_place``:
regenerate with the directive; ``accept``: the answer may stand, a judge decides; ``stop``: no
retry can help). Classes are added by editing the file; the code only names the classes its
checkers and the result check emit, and loading fails when one of those is missing.

    >>> taxonomy = load_taxonomy()
    >>> cls = taxonomy["table_not_found"]
    >>> cls.phase, cls.action
    ('schema_coverage', 'expand_schema')
    >>> taxonomy.finding("like_on_enum", source="like_on_enum", detail="stage LIKE '%open%'").action
    'repair_in_place'
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from core.types import Frozen
from pipelines.agentic_mode.errors import TaxonomyError
from pipelines.contracts import Dialect

TAXONOMY_FILE = Path(__file__).resolve().parent / "taxonomy.yaml"

Phase = Literal["schema_coverage", "nested_type", "syntax_dialect", "runtime", "semantic"]
Action = Literal["expand_schema", "repair_in_place", "accept", "stop"]
# Named groups a message pattern may capture: what the message names and what the engine proposes.
PATTERN_GROUPS = frozenset({"identifier", "suggestion"})
# What a class's ``rule`` template may name: the finding's fields (pipelines/agentic_mode/cheatsheet.py).
RULE_PLACEHOLDERS = frozenset({"identifier", "suggestion", "detail"})


class FailureClass(Frozen):
    """One class of the taxonomy.

    ``messages`` holds, per engine, regular expressions (Python ``re``, searched in the engine's
    message) that identify the class; a group ``identifier`` captures what the message names, a
    group ``suggestion`` what the engine proposes instead. ``error_kinds`` lists the sandbox's
    ``ExecutionResult.error_kind`` values the class stands for whatever the message says.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    phase: Phase
    action: Action
    description: str = Field(min_length=1)
    directive: str = Field(
        min_length=1
    )  # what the generator is told to do, in a small model's terms
    messages: dict[Dialect, tuple[str, ...]] = Field(default_factory=dict)
    error_kinds: tuple[str, ...] = ()
    rule: str | None = Field(default=None, min_length=1)

    @field_validator("rule")
    @classmethod
    def _rule_names_finding_fields(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        where = f"class {info.data.get('name', '?')!r}: rule {value!r}"
        try:
            fields = list(string.Formatter().parse(value))
        except ValueError as exc:  # an unbalanced brace
            raise ValueError(f"{where} is no template: {exc}") from exc
        for _, name, spec, conversion in fields:
            if name is not None and (name not in RULE_PLACEHOLDERS or spec or conversion):
                raise ValueError(
                    f"{where} names {{{name}}}{'!' + conversion if conversion else ''}"
                    f"{':' + spec if spec else ''}; allowed: "
                    + ", ".join(f"{{{p}}}" for p in sorted(RULE_PLACEHOLDERS))
                )
        return value

    @field_validator("messages")
    @classmethod
    def _patterns_compile(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for patterns in value.values():
            for pattern in patterns:
                try:
                    groups = set(re.compile(pattern).groupindex)
                except re.error as exc:
                    raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
                if groups - PATTERN_GROUPS:
                    raise ValueError(
                        f"pattern {pattern!r} names groups {sorted(groups - PATTERN_GROUPS)}; "
                        f"allowed: {sorted(PATTERN_GROUPS)}"
                    )
        return value


class Finding(Frozen):
    """One failure of one SQL, classified: the class with its action and directive, where it
    was found (a checker stage, ``sqlite`` / ``duckdb`` for an engine message, ``result``), and
    the offending part."""

    error_class: str
    phase: Phase
    action: Action
    directive: str
    source: str
    detail: str  # the offending part in words: the checker's sentence, the message's first line
    identifier: str = ""  # the name, value or function at fault, when one is known
    suggestion: str = ""  # what the schema or the engine offers instead

    def feedback(self) -> str:
        """One line for the generator's next prompt: class, what was found, what to do."""
        offer = f" Candidates: {self.suggestion}." if self.suggestion else ""
        return f"[{self.error_class}] {self.detail}.{offer} {self.directive}"


class Taxonomy(Frozen):
    """The loaded taxonomy: classes in file order (the order messages are matched in) and the
    ``fallback`` class an unrecognised error falls into."""

    fallback: str
    classes: tuple[FailureClass, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Taxonomy:
        names = [c.name for c in self.classes]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"class names repeated: {repeated}")
        if self.fallback not in names:
            raise ValueError(f"fallback class {self.fallback!r} is not a class")
        return self

    def __getitem__(self, name: str) -> FailureClass:
        for cls in self.classes:
            if cls.name == name:
                return cls
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(cls.name == name for cls in self.classes)

    def require(self, names: Iterable[str], what: str) -> None:
        """TaxonomyError unless every class in ``names`` (those ``what`` emits) is defined."""
        missing = sorted(set(names) - {c.name for c in self.classes})
        if missing:
            raise TaxonomyError(f"{what} emits classes the taxonomy lacks: {missing}")

    def finding(
        self, name: str, *, source: str, detail: str, identifier: str = "", suggestion: str = ""
    ) -> Finding:
        cls = self[name]
        return Finding(
            error_class=cls.name,
            phase=cls.phase,
            action=cls.action,
            directive=cls.directive,
            source=source,
            detail=detail,
            identifier=identifier,
            suggestion=suggestion,
        )


@functools.lru_cache(maxsize=8)
def _load(path: Path, mtime: float) -> Taxonomy:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TaxonomyError(f"cannot read the taxonomy {path}: {exc}") from exc
    try:
        return Taxonomy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise TaxonomyError(f"taxonomy {path}: {where}: {first['msg']}") from exc


def load_taxonomy(path: Path | str | None = None) -> Taxonomy:
    """The taxonomy in ``path`` (default: the packaged ``taxonomy.yaml``), validated: unique
    class names, known phases and actions, patterns that compile, a fallback that exists.
    Cached per file version."""
    file = Path(path) if path is not None else TAXONOMY_FILE
    try:
        mtime = file.stat().st_mtime
    except OSError as exc:
        raise TaxonomyError(f"cannot read the taxonomy {file}: {exc}") from exc
    return _load(file.resolve(), mtime)
