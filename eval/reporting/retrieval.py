"""Whether a run's questions were answered with retrieved cell values or examples (L0).

retrieval status line (pipelines.indexing.builder.ensure) ─┐
predictions' ``retrieval`` column ──► retrieval_use ────────┴─► RetrievalUse ──► retrieval_lines

>>> use = RetrievalUse(status="retrieval: off (x)", expected=True,
...                    shares={"cells": 0.0, "examples": 0.0, "none": 1.0})
>>> retrieval_lines(use)[1]
'cells 0%, examples 0% of questions answered with them; none 100%'
>>> retrieval_lines(use)[2] == NO_RETRIEVAL
True
"""

from __future__ import annotations

import polars as pl

from core.types import Frozen

RETRIEVAL_SOURCES = ("cells", "examples")
NO_RETRIEVAL = "No question was answered with retrieved cell values or examples: retrieval was off."


class RetrievalUse(Frozen):
    status: str = ""  # the run's status line, e.g. "retrieval: off (examples: ...)"
    expected: bool = False  # the configured pipeline retrieves (not single pass)
    # share of questions answered with each source, and with "none"; empty without questions
    shares: dict[str, float] = {}

    def figures(self) -> dict[str, float]:
        """``retrieval_cells_share``, ``retrieval_examples_share``, ``retrieval_none_share``."""
        return {f"retrieval_{source}_share": share for source, share in self.shares.items()}


def retrieval_use(frame: pl.DataFrame, status: str = "", expected: bool = False) -> RetrievalUse:
    """Share of questions answered with each L0 source and with none; a record without the
    column counts as answered without."""
    if frame.height == 0:
        return RetrievalUse(status=status, expected=expected)
    if "retrieval" in frame.columns:
        served = frame.get_column("retrieval").fill_null([]).to_list()
    else:
        served = [[]] * frame.height
    shares = {s: sum(s in r for r in served) / frame.height for s in RETRIEVAL_SOURCES}
    shares["none"] = sum(not r for r in served) / frame.height
    return RetrievalUse(status=status, expected=expected, shares=shares)


def retrieval_lines(use: RetrievalUse) -> list[str]:
    """The status line, the shares, and a loud line when no question was answered with
    retrieval although the pipeline retrieves."""
    lines = [use.status] if use.status else []
    if not use.shares:
        return lines
    lines.append(
        ", ".join(f"{s} {use.shares[s]:.0%}" for s in RETRIEVAL_SOURCES)
        + f" of questions answered with them; none {use.shares['none']:.0%}"
    )
    if use.expected and use.shares["none"] == 1.0:
        lines.append(NO_RETRIEVAL)
    return lines
