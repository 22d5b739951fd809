"""A nested column's documentation, shared out among its sub-fields.

A catalog comment can only describe a whole column (``COMMENT ON COLUMN tickets.links``), so a
nested column's documentation usually describes its sub-fields in its own clauses ("type is
the relation ...; linked_at is when the link was made"). Each clause goes to the sub-field it is
about:

- a clause that starts with sub-field names ("status is ...", "policy.targets.first_response
  and policy.targets.resolution each hold ...") goes to the deepest sub-field holding all of
  them (``policy.targets``);
- any other clause naming sub-fields goes to the deepest sub-field holding every one it names;
- a clause naming none that lists values ("One of: 'primary' = ...") goes where the clause
  before it went ("role is the kind of ownership. One of: ..." is about ``role``);
- any other clause naming none stays with the column.

A name is a sub-field's path below the column (``policy.name``) or its last part (``name``),
singular or plural ("All link types: ..." is about ``type``); the longest name is found first,
so ``policy.name`` is not also read as ``policy``. Clauses end at ``.`` or ``;`` outside
parentheses; a piece that starts with a quoted value (``'high' = ...``), or the rest of a listed
value's meaning, continues the clause listing the values.

    >>> doc = ("Typed links, a list. type is the relation to the target; linked_at is when "
    ...        "the link was made. All types: 'blocks' = it blocks; 'relates_to' = related.")
    >>> for path, text in share(doc, ["type", "target_type", "linked_at"]).items():
    ...     print(f"{path!r}: {text}")
    '': Typed links, a list.
    'type': type is the relation to the target. All types: 'blocks' = it blocks; 'relates_to' = related.
    'linked_at': linked_at is when the link was made.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs")
# What may stand between two names of a clause's subject: "a and b", "a, b or c", "a / b".
_LISTING = re.compile(r"['\"`][^'\"`]+['\"`]\s*[=:]")  # 'high' = ..., "M": male
_SUBJECT_GAP = re.compile(r"^\s*(?:,|/|&)?\s*(?:and|or)?\s*$")


def _name(name: str) -> str:
    """A pattern of ``name`` as a word of its own, singular or plural (``type``, ``types``,
    ``statuses``, ``categories``)."""
    forms = [name + "es", name + "s", name]
    if name.endswith("y"):
        forms.insert(0, name[:-1] + "ies")
    return rf"(?<![\w])(?:{'|'.join(map(re.escape, forms))})(?![\w])"


def clauses(text: str, names: Sequence[str] = ()) -> list[str]:
    """``text`` cut after each ``.`` or ``;`` outside parentheses that a space follows; a clause
    ending in ``;`` ends in ``.``. A piece continues the clause before it when it starts with a
    quoted value, or when that clause lists values (``'a' = ...``) and the piece starts in lower
    case with none of ``names``: the rest of a value's meaning."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        ends = char in ".;" and depth <= 0 and (i + 1 == len(text) or text[i + 1].isspace())
        if ends and not text[start:i].lower().endswith(_ABBREVIATIONS):
            spans.append((start, i + 1))
            start = i + 1
    spans.append((start, len(text)))
    merged: list[tuple[int, int]] = []
    for begin, end in spans:
        piece = text[begin:end].strip()
        if not piece:
            continue
        previous = text[merged[-1][0] : merged[-1][1]] if merged else ""
        named = any(re.match(_name(name), piece) for name in names)
        meaning = _LISTING.search(previous) and piece[0].islower() and not named
        if previous and (piece[0] in "'\"`" or meaning):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((begin, end))
    return [re.sub(r";$", ".", text[begin:end].strip()) for begin, end in merged]


def _ancestor(paths: set[str]) -> str:
    """The deepest path holding every one of ``paths`` (dotted), ``""`` for the column itself."""
    parts = [p.split(".") for p in paths]
    common: list[str] = []
    for level in zip(*parts):
        if len(set(level)) > 1:
            break
        common.append(level[0])
    return ".".join(common)


def _mentions(clause: str, names: list[tuple[str, set[str]]]) -> list[tuple[int, int, set[str]]]:
    """``(start, end, sub-field paths)`` of each name in ``clause``, longest names first."""
    found = []
    work = clause
    for name, paths in names:
        for match in re.finditer(_name(name), work):
            found.append((match.start(), match.end(), paths))
            work = work[: match.start()] + " " * (match.end() - match.start()) + work[match.end() :]
    return sorted(found, key=lambda m: m[0])


def _owner(clause: str, names: list[tuple[str, set[str]]]) -> str | None:
    """The sub-field ``clause`` is about (module docstring), None when it names none."""
    found = _mentions(clause, names)
    if not found:
        return None
    subject: set[str] = set()
    if found[0][0] == 0:
        end = 0
        for start, stop, paths in found:
            if not _SUBJECT_GAP.match(clause[end:start]):
                break
            subject |= paths
            end = stop
    return _ancestor(subject or {p for _, _, paths in found for p in paths})


def share(description: str, paths: Sequence[str]) -> dict[str, str]:
    """``description`` of a nested column split among its sub-fields' ``paths`` (dotted, below
    the column): path -> its clauses, ``""`` -> the column's own; only paths given clauses."""
    by_name: dict[str, set[str]] = {}
    for path in paths:
        for name in (path, path.rsplit(".", 1)[-1]):
            by_name.setdefault(name, set()).add(path)
    names = sorted(by_name.items(), key=lambda item: -len(item[0]))
    out: dict[str, list[str]] = {}
    owner = ""
    for clause in clauses(description, list(by_name)):
        named = _owner(clause, names)
        if named is not None:
            owner = named
        elif not _LISTING.search(clause):  # a list naming none goes on about the owner before
            owner = ""
        out.setdefault(owner, []).append(clause)
    return {path: " ".join(texts) for path, texts in out.items()}
