"""A question's skeleton: its wording with values, numbers and schema words masked.

Deterministic and offline, so the example index builds without a model. Masks, applied in
this order (earlier masks win):

    mask        what
    ---------   ---------------------------------------------------------------------
    [VALUE]     given literals (e.g. the gold SQL's strings), quoted spans, and
                capitalised words after the first (proper nouns: France, Tom Hanks)
    [NUMBER]    numbers and ordinals written in digits (42, 3.5, 1,000, 2nd)
    [TABLE]     a table name, as words (``singer_in_concert`` -> "singer in concert")
    [COLUMN]    a column name, or one content word of a column name ("release year")

Words are matched lower-cased and crudely singularised (singers -> singer, cities -> city);
longer schema phrases win over shorter ones; runs of the same mask collapse to one.

    >>> words = SchemaWords.from_names(["singer"], ["name", "country", "song_release_year"])
    >>> skeletonise("What are the names of singers from France born after 1990?", words)
    'what are the [COLUMN] of [TABLE] from [VALUE] born after [NUMBER] ?'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from core.types import Frozen
from pipelines.contracts import SchemaView

MAX_PHRASE_WORDS = 4
TOKEN = re.compile(
    r"\[[A-Z]+\]|\d+(?:[.,]\d+)*(?:st|nd|rd|th)?|\w+|'s\b|[^\w\s]"
)  # possessive 's apart
NUMBER = re.compile(r"^\d+(?:[.,]\d+)*(?:st|nd|rd|th)?$")
# A single-quoted span opens after a non-word character and may contain apostrophes (Stark's).
QUOTED = re.compile(r"\"[^\"]+\"|“[^”]+”|‘[^’]+’|(?<!\w)'.+?'(?!\w)")
CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
# Words too common to be a schema mention on their own (they still count inside a phrase).
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "their",
        "them",
        "there",
        "these",
        "this",
        "those",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "with",
        "id",
    ]
)


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def name_words(name: str) -> tuple[str, ...]:
    """``song_release_year`` / ``SongReleaseYear`` / ``song release year`` -> its words."""
    spaced = CAMEL.sub(" ", name).replace("_", " ").replace("-", " ").replace(".", " ")
    return tuple(singular(w) for w in spaced.lower().split())


class SchemaWords(Frozen):
    """Phrases (tuples of normalised words) that name tables and columns of one database."""

    tables: frozenset[tuple[str, ...]]
    columns: frozenset[tuple[str, ...]]

    @classmethod
    def from_names(cls, tables: Iterable[str], columns: Iterable[str]) -> SchemaWords:
        table_phrases = {name_words(t) for t in tables} - {()}
        column_phrases: set[tuple[str, ...]] = set()
        for column in columns:
            words = name_words(column)
            if words:
                column_phrases.add(words)
                column_phrases.update((w,) for w in words if w not in STOP_WORDS)
        return cls(
            tables=frozenset(table_phrases), columns=frozenset(column_phrases - table_phrases)
        )

    @classmethod
    def from_view(cls, view: SchemaView) -> SchemaWords:
        columns = [c.name for t in view.tables for c in t.columns]
        return cls.from_names([t.name for t in view.tables], columns)

    @classmethod
    def from_spider_tables(cls, entry: dict) -> SchemaWords:
        """From one ``tables.json`` entry: original and natural-language names."""
        tables = list(entry.get("table_names_original", [])) + list(entry.get("table_names", []))
        columns = [
            name
            for key in ("column_names_original", "column_names")
            for _, name in entry.get(key, [])
            if name != "*"
        ]
        return cls.from_names(tables, columns)


EMPTY = SchemaWords(tables=frozenset(), columns=frozenset())


def _mask_literals(question: str, literals: Sequence[str]) -> str:
    for literal in sorted(
        {lit.strip() for lit in literals if len(lit.strip()) > 1}, key=len, reverse=True
    ):
        question = re.sub(
            r"(?<!\w)" + re.escape(literal) + r"(?!\w)", " [VALUE] ", question, flags=re.IGNORECASE
        )
    return QUOTED.sub(" [VALUE] ", question)


def skeletonise(question: str, schema: SchemaWords = EMPTY, literals: Sequence[str] = ()) -> str:
    tokens = TOKEN.findall(_mask_literals(question, literals))
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("["):
            out.append(token)
            i += 1
            continue
        if NUMBER.match(token):
            out.append("[NUMBER]")
            i += 1
            continue
        if i > 0 and token[0].isupper() and token != "I" and token.isalpha():
            out.append("[VALUE]")
            i += 1
            continue
        for n in range(min(MAX_PHRASE_WORDS, len(tokens) - i), 0, -1):
            phrase = tuple(singular(t.lower()) for t in tokens[i : i + n])
            if phrase in schema.tables:
                out.append("[TABLE]")
                break
            if phrase in schema.columns:
                out.append("[COLUMN]")
                break
        else:
            out.append(token.lower())
            n = 1
        i += n
    collapsed = [t for k, t in enumerate(out) if not (k and t.startswith("[") and t == out[k - 1])]
    return " ".join(collapsed)
