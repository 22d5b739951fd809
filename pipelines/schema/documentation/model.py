"""What a database's own documentation says about its tables and columns, whatever file or
catalog it came from, and the notes a prompt shows of it.

    >>> docs = SchemaDocs(tables={"schools": TableDoc(columns={
    ...     "c14": ColumnDoc(description="Students eligible for Title I funding"),
    ...     "state": ColumnDoc(description="State of the school", values="Two-letter code"),
    ... })})
    >>> docs.column("Schools", "C14").note("c14")
    'Students eligible for Title I funding'
    >>> docs.column("schools", "state").note("state", table="schools")   # adds nothing to the names
    'values: Two-letter code'

A note is the column's documentation whole, less only what adds nothing to the column's and
its table's names: a description is left out only when every word it says is a word of those
names or a function word ("State of the school" on ``schools.state``); a description that
lists values, and how the values are stored (codes, units, formats, a vocabulary, examples),
always stays, and nothing is cut.
"""

from __future__ import annotations

import re

from pydantic import Field

from core.types import Frozen

_WORD = re.compile(r"[a-z]+|[0-9]+")
# Words that say nothing about a column by themselves ("The state of the member").
_FUNCTION_WORDS = frozenset(
    "a an the of for to in on at by with and or is are be this that its it as from each per "
    "which who whom whose when where what row record value column field table entry".split()
)
# A value list inside prose: 'label' = meaning, or "one of" / "either" before the labels.
_LISTS_VALUES = re.compile(r"'[^'\n]{1,80}'\s*=|\b(?:one of|either)\b", re.IGNORECASE)


def one_line(text: object) -> str:
    """``text`` with its whitespace folded to single spaces ("" for None)."""
    return " ".join(str(text).split()) if text is not None else ""


def words(text: str) -> list[str]:
    """Lower-cased words and numbers of an identifier or a phrase (``claimStatus`` -> claim, status)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return _WORD.findall(spaced.lower())


# Crude suffix stripping, enough for "covered" to meet "coverage" and "monthly" to meet "month".
_SUFFIXES = (("ies", "y"), ("ing", ""), ("age", ""), ("ed", ""), ("ly", ""), ("es", ""), ("s", ""))
# Abbreviations common in column names, and the word prose uses for them.
ABBREVIATIONS = {
    "id": "identifier",
    "no": "number",
    "num": "number",
    "nbr": "number",
    "qty": "quantity",
    "amt": "amount",
    "dt": "date",
    "desc": "description",
    "cd": "code",
    "pct": "percent",
    "avg": "average",
    "yr": "year",
    "addr": "address",
}


def stem(word: str) -> str:
    """``word`` without a plural or common derivational suffix (``claims`` -> ``claim``)."""
    for suffix, replacement in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    return word


def adds_to(text: str, *names: str) -> bool:
    """True when ``text`` says a word that none of ``names`` (a column's, its table's) says and
    that is not a function word: "Adjudication status of the claim" adds to ``claim_status``
    ("adjudication"), "State of the school" adds nothing to ``schools.state``. An abbreviation
    in a name says its word (``dob`` does not say "birth"; ``id`` says "identifier")."""
    said = {stem(w) for name in names for w in words(name)}
    said |= {stem(ABBREVIATIONS[w]) for name in names for w in words(name) if w in ABBREVIATIONS}
    spoken = (w for w in words(text) if not (len(w) == 1 and w.isalpha()))  # the s of "member's"
    return any(w not in _FUNCTION_WORDS and stem(w) not in said for w in spoken)


def lists_values(text: str) -> bool:
    """True when ``text`` names a column's values (``'open' = ...``, "one of", "either")."""
    return bool(_LISTS_VALUES.search(text))


class ColumnDoc(Frozen):
    """One column's documentation; every field is optional."""

    description: str = ""  # what the column means
    values: str = ""  # how values are stored: codes, units, formats, the vocabulary
    label: str = ""  # a readable name (BIRD's column_name, Spider's column_names)

    def text(self) -> str:
        """Everything known, one line: what the schema view and the linking step read."""
        parts = [self.description]
        if self.label and self.label.lower() not in self.description.lower():
            parts[0] = f"{self.description} ({self.label})" if self.description else self.label
        if self.values:
            parts.append(f"values: {self.values}")
        return "; ".join(p for p in parts if p)

    def note(self, name: str, mode: str = "auto", table: str = "") -> str:
        """The prompt's note on column ``name`` of ``table``: ``values`` (how values are stored,
        and a description that lists them), ``auto`` (plus a description that adds to the
        names, module docstring) or ``all`` (the readable name and description always);
        ``off``: nothing. Never cut."""
        if mode == "off":
            return ""
        parts = []
        if mode == "all":
            meaning = self.text().split("; values: ")[0]
        elif lists_values(self.description) or (
            mode == "auto" and adds_to(self.description, name, table)
        ):
            meaning = self.description
        else:
            meaning = ""
        if meaning:
            parts.append(
                meaning[:-1] if meaning.endswith(".") and not meaning.endswith("..") else meaning
            )
        values = self.values.strip()
        if values:
            parts.append(f"values: {values}")
        return "; ".join(parts)

    def __bool__(self) -> bool:
        return bool(self.description or self.values or self.label)

    def or_else(self, other: ColumnDoc) -> ColumnDoc:
        """This documentation, each empty field filled from ``other``."""
        return ColumnDoc(
            description=self.description or other.description,
            values=self.values or other.values,
            label=self.label or other.label,
        )


class TableDoc(Frozen):
    """One table's documentation: its description and its columns' (lower-cased names)."""

    description: str = ""
    columns: dict[str, ColumnDoc] = Field(default_factory=dict)

    def or_else(self, other: TableDoc) -> TableDoc:
        columns = dict(other.columns)
        for name, doc in self.columns.items():
            columns[name] = doc.or_else(other.columns[name]) if name in other.columns else doc
        return TableDoc(description=self.description or other.description, columns=columns)


class SchemaDocs(Frozen):
    """A database's documentation, tables keyed by lower-cased name; ``sources`` names the
    sources that contributed, the first of them winning where two document the same field."""

    tables: dict[str, TableDoc] = Field(default_factory=dict)
    sources: tuple[str, ...] = ()

    def table(self, name: str) -> TableDoc | None:
        return self.tables.get(name.lower())

    def column(self, table: str, column: str) -> ColumnDoc | None:
        found = self.table(table)
        return found.columns.get(column.lower()) if found else None

    def or_else(self, other: SchemaDocs) -> SchemaDocs:
        """These docs, with what only ``other`` documents added (field by field)."""
        tables = dict(other.tables)
        for name, doc in self.tables.items():
            tables[name] = doc.or_else(other.tables[name]) if name in other.tables else doc
        sources = tuple(dict.fromkeys(self.sources + other.sources))
        return SchemaDocs(tables=tables, sources=sources)

    def documented(self) -> int:
        """How many columns carry a description, label or value note."""
        return sum(1 for t in self.tables.values() for c in t.columns.values() if c)

    def __bool__(self) -> bool:
        return bool(self.tables)
