"""Schema linking without an LLM: the tables a question needs, joined up over the join graph.

    question, evidence ──┐
    cell-value hits ─────┼──► what each table explains of the question's words
    similarity (opt.) ───┤        ──► greedy cover: the table adding most, while it adds enough
    SchemaView + docs ───┘        ──► + the tables on every shortest join path between kept ones
                                  ──► + more tables by score while the prompt fits ``budget``
                                  ──► LinkedSchema(tables, scores, bridges)

A table explains a question word through its own name (``table_name``), a column's name
(``column_name``), a value it stores — a cell hit from the L0 index, an item of its documented
vocabulary, a sample (``value``) — or its documentation (``description``); an embedding
similarity between the question and its documentation (computed by the caller) adds to that.
The cover keeps whatever explains most of what is not yet explained, so ten ``claim_*`` columns
do not outvote the one table the question names. The join closure keeps every table on a
shortest path between two kept tables, not just one path, and the budget spends the tokens the
focus saved on the next-best tables: recall first, then size.

    >>> from pipelines.schema import introspect
    >>> focus = link_schema(introspect(db), "Which singers performed in the Auditions concert?")
    >>> focus.tables, focus.bridges
    (('singer', 'concert', 'singer_in_concert'), ('singer_in_concert',))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from pydantic import Field

from core.types import Frozen
from pipelines.contracts import CellHit, ColumnInfo, SchemaView, TableInfo
from pipelines.schema.documentation.model import stem, words
from pipelines.schema.documentation.vocabulary import value_note
from pipelines.schema.joins import JoinGraph, join_graph
from pipelines.schema.render import flatten

# Words that name nothing in particular: a question's "id" or "name" points at every table.
STOP_WORDS = frozenset(
    """a an and are as at be by did do does each every for from had has have how i in is it its
    list many me much of on or per show than that the their them there these they this those to
    was were what when where which who whom whose why with id ids key code name names number
    type value values date total all any most least more less average sum count give find tell
    return display please""".split()
)


class LinkWeights(Frozen):
    """What a table earns for each question word it explains, by where the word is found."""

    table_name: float = 3.0  # the table's name, shared by its words
    column_name: float = 2.0  # a column's name, shared by its words
    value: float = 3.0  # each word of a value it stores (cell hit, vocabulary, sample)
    description: float = 1.0  # a word of its documentation
    similar: float = 4.0  # times how far the question's embedding similarity exceeds ``floor``
    floor: float = 0.3


DEFAULT_WEIGHTS = LinkWeights()


class LinkedSchema(Frozen):
    """The tables kept for one question, in the schema's order, with why."""

    tables: tuple[str, ...]
    scores: dict[str, float] = Field(default_factory=dict)  # every table's score
    bridges: tuple[str, ...] = ()  # kept only to join kept tables
    whole: bool = False  # nothing pointed anywhere: the whole schema is kept
    # ``tables`` from the most wanted to the least: the cover's tables in the order kept, each
    # after the tables that join it to those before, then the budget's (whole: by score)
    ranked: tuple[str, ...] = ()


def _content(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOP_WORDS and not w.isdigit()}


def _phrases(column: ColumnInfo) -> set[str]:
    """Values a question might name: samples, and the words of its value note, labels and their
    meanings both (``values: M: male; F: female`` gives male, female)."""
    found = {s.strip().lower() for s in column.samples if s and len(s.strip()) > 2}
    for item in re.split(r"[,;]|\bor\b|:", value_note(column.description or "")):
        item = item.strip(" .'\"").lower()
        if 2 < len(item) <= 40 and not item.isdigit():
            found.add(item)
    return found


def _explained(
    table: TableInfo, asked: set[str], text: str, weights: LinkWeights
) -> dict[str, float]:
    """Question word -> the most a table explains it (by its name, columns, values, documentation)."""
    best: dict[str, float] = {}

    def credit(found: set[str], weight: float) -> None:
        for word in found & asked:
            best[word] = max(best.get(word, 0.0), weight)

    def named(name: str, weight: float) -> None:  # a name's weight shared by its words
        found = _content(name)
        credit(found, weight / max(1, len(found)))

    named(table.name, weights.table_name)
    credit(_content(table.description or ""), weights.description)
    for top in table.columns:
        for column in flatten(top):
            named(column.name.split(".")[-1], weights.column_name)
            credit(_content(column.description or ""), weights.description)
            for phrase in _phrases(column):
                if re.search(rf"\b{re.escape(phrase)}\b", text):
                    credit(_content(phrase), weights.value)
    return best


def _distances(graph: JoinGraph, source: str) -> dict[str, int]:
    """Join hops from ``source`` to every table it connects to (breadth-first)."""
    neighbours: dict[str, set[str]] = {}
    for e in graph.edges:
        neighbours.setdefault(e.table, set()).add(e.ref_table)
        neighbours.setdefault(e.ref_table, set()).add(e.table)
    hops, frontier = {source: 0}, [source]
    while frontier:
        step: list[str] = []
        for table in frontier:
            for n in sorted(neighbours.get(table, ())):
                if n not in hops:
                    hops[n] = hops[table] + 1
                    step.append(n)
        frontier = step
    return hops


class _Paths:
    """Tables on every shortest join path between two tables (hop counts computed once each)."""

    def __init__(self, graph: JoinGraph) -> None:
        self.graph = graph
        self._hops: dict[str, dict[str, int]] = {}

    def hops(self, table: str) -> dict[str, int]:
        if table not in self._hops:
            self._hops[table] = _distances(self.graph, table)
        return self._hops[table]

    def between(self, kept: list[str], table: str) -> list[str]:
        """Tables strictly inside a shortest path from ``table`` to any kept one."""
        here = self.hops(table)
        inside: list[str] = []
        for other in kept:
            far = here.get(other)
            if not far or far < 2:
                continue
            there = self.hops(other)
            inside += [
                t for t, h in here.items() if 0 < h < far and there.get(t, far + 1) + h == far
            ]
        return [t for t in dict.fromkeys(inside) if t not in kept and t != table]


def link_schema(
    view: SchemaView,
    question: str,
    evidence: str = "",
    cell_hits: Iterable[CellHit] = (),
    *,
    min_gain: float = 1.0,
    max_tables: int = 6,
    similarity: Mapping[str, float] | None = None,
    sizes: Mapping[str, int] | None = None,
    budget: int | None = None,
    weights: LinkWeights = DEFAULT_WEIGHTS,
    graph: JoinGraph | None = None,
) -> LinkedSchema:
    """The tables of ``view`` that ``question`` (and ``evidence``) needs.

    Greedy cover: the table that explains most of what the kept tables do not yet explain is
    kept next, while it adds at least ``min_gain`` and fewer than ``max_tables`` are kept. Then
    the tables on every shortest join path between kept tables; then, given each table's prompt
    size (``sizes``, tokens) and a ``budget``, the other tables that explain anything, best
    score first, while the focused prompt fits. Where nothing scores, the whole schema is kept
    (``whole=True``). ``similarity`` maps a table to the best cosine similarity between the
    question and its documented columns.
    """
    text = f"{question} {evidence}".lower()
    asked = _content(text)
    explained = {t.name: _explained(t, asked, text, weights) for t in view.tables}
    for hit in cell_hits:
        for table in view.tables:
            if table.name.lower() == hit.table.lower():
                for word in _content(hit.value) & asked or {f"cell:{hit.value.lower()}"}:
                    explained[table.name][word] = max(
                        explained[table.name].get(word, 0.0), weights.value
                    )
    for name, similar in (similarity or {}).items():
        if name in explained and similar > weights.floor:
            explained[name]["~similar"] = (
                weights.similar * (similar - weights.floor) / (1 - weights.floor)
            )
    scores = {name: sum(found.values()) for name, found in explained.items()}
    covered: dict[str, float] = {}
    ranked: list[str] = []
    while len(ranked) < max_tables:
        gains = {
            name: sum(max(0.0, w - covered.get(word, 0.0)) for word, w in found.items())
            for name, found in explained.items()
            if name not in ranked
        }
        if not gains:
            break
        name = max(gains, key=lambda n: (gains[n], scores[n]))
        if gains[name] < min_gain:
            break
        ranked.append(name)
        for word, w in explained[name].items():
            covered[word] = max(covered.get(word, 0.0), w)
    if not ranked:
        catalog = tuple(t.name for t in view.tables)
        by_score = tuple(sorted(catalog, key=lambda n: -scores[n]))
        return LinkedSchema(tables=catalog, scores=scores, whole=True, ranked=by_score)
    paths = _Paths(graph or join_graph(view))
    kept: list[str] = []
    bridges: list[str] = []
    for name in ranked:
        if name in kept:
            continue
        between = paths.between(kept, name)
        bridges += [t for t in between if t not in ranked]
        kept += [*between, name]
    if sizes is not None and budget is not None:
        used = sum(sizes.get(t, 0) for t in kept)
        for name in sorted(scores, key=lambda n: -scores[n]):
            if name in kept or scores[name] <= 0:
                continue
            between = paths.between(kept, name)
            extra = sum(sizes.get(t, 0) for t in (*between, name))
            if used + extra <= budget:
                bridges += [t for t in between if t not in ranked]
                kept += [*between, name]
                used += extra
    order = {t.name: i for i, t in enumerate(view.tables)}
    return LinkedSchema(
        tables=tuple(sorted(kept, key=order.__getitem__)),
        scores=scores,
        bridges=tuple(dict.fromkeys(bridges)),
        ranked=tuple(kept),
    )
