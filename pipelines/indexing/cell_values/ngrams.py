"""Deterministic candidate phrases of a question, to look up as cell values.

The baseline for cell retrieval before (or without) the L1 extractor: every word n-gram
(1..``max_n`` words) whose first and last words are not stop words, plus quoted spans whole.

    >>> question_ngrams('Which singers live in New York?')
    ['singers', 'singers live', 'live', 'live in New', 'New', 'New York', 'York']
"""

from __future__ import annotations

import re

WORD = re.compile(r"[\w'-]+")
QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|(?<!\w)'(.+?)'(?!\w)")
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "by",
        "can",
        "did",
        "do",
        "does",
        "each",
        "every",
        "find",
        "for",
        "from",
        "give",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "list",
        "many",
        "me",
        "more",
        "most",
        "much",
        "name",
        "names",
        "of",
        "on",
        "or",
        "other",
        "return",
        "show",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "number",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "without",
    ]
)


def question_ngrams(question: str, max_n: int = 3) -> list[str]:
    """Quoted spans first, then n-grams in reading order; duplicates removed."""
    quoted = [next(g for g in m.groups() if g) for m in QUOTED.finditer(question)]
    words = WORD.findall(question)
    grams: list[str] = []
    for i in range(len(words)):
        for n in range(1, max_n + 1):
            span = words[i : i + n]
            if len(span) < n or span[0].lower() in STOP_WORDS or span[-1].lower() in STOP_WORDS:
                continue
            grams.append(" ".join(span))
    return list(dict.fromkeys(quoted + grams))
