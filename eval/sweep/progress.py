"""The sweep's progress bar: questions done / total, EX so far, this machine's pace, the ETA
it gives, tokens per second, time elapsed.

    with SweepProgress(total=108, label="single_pass", previous=store.read()) as bar:
        for record in records:
            bar.advance(record)

``previous`` (rows finished before a resume) counts toward done and EX but not toward the pace,
the ETA or the token rate, which measure this invocation only: the ETA is the questions left
times the seconds per question answered so far here (rich's own estimate forgets a rate older
than 30 s, and a CPU question takes longer), and never past the end of a time budget. Where
the console is not a terminal (a log file), each answered question also prints one line with
the same figures.
"""

from __future__ import annotations

import math
import time

import polars as pl
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from eval.sweep.records import QuestionRecord


class SweepProgress:
    def __init__(
        self,
        total: int,
        label: str,
        previous: pl.DataFrame | None = None,
        enabled: bool = True,
        console: Console | None = None,
        budget_s: float | None = None,
    ) -> None:
        self._graded = self._correct = 0
        done = 0
        if previous is not None and previous.height:
            done = previous.height
            verdicts = previous.get_column("ex_bird").drop_nulls()
            ungraded = previous.filter(
                pl.col("ex_bird").is_null()
                & pl.col("grading_error").is_not_null()
                & pl.col("gold_sql").is_not_null()
            )
            self._graded, self._correct = verdicts.len() + ungraded.height, int(verdicts.sum())
        self._tokens = self._answered = 0
        self._done, self._total, self._label = done, total, label
        self._budget_s = budget_s  # the sweep's time budget: the ETA is never past its end
        self._enabled = enabled
        self._started = time.perf_counter()
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("EX {task.fields[ex]}"),
            TextColumn("{task.fields[pace]}"),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("{task.fields[tok_s]} tok/s"),
            TimeElapsedColumn(),
            console=console,
            disable=not enabled,
        )
        self._task = self._progress.add_task(
            label, total=total, completed=done, ex=self._ex(), pace="", eta="-", tok_s="-"
        )

    def _ex(self) -> str:
        ex = self.ex_so_far
        return "-" if ex is None else f"{ex:.3f}"

    @property
    def ex_so_far(self) -> float | None:
        return self._correct / self._graded if self._graded else None

    def advance(self, record: QuestionRecord) -> None:
        if record.ex_bird is not None:
            self._graded += 1
            self._correct += int(record.ex_bird)
        elif (
            record.grading_error is not None and record.gold_sql
        ):  # counted wrong, as in the report
            self._graded += 1
        self._tokens += record.prompt_tokens + record.completion_tokens
        self._answered += 1
        self._done += 1
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        pace = elapsed / self._answered
        left = pace * (self._total - self._done)
        if self._budget_s is not None:
            left = min(left, max(self._budget_s - elapsed, 0.0))
        fields = {
            "ex": self._ex(),
            "pace": f"{pace:.1f} s/question here",
            "eta": duration(left),
            "tok_s": f"{self._tokens / elapsed:.0f}",
        }
        self._progress.update(self._task, advance=1, **fields)
        if self._enabled and not self._progress.console.is_terminal:
            self._progress.console.print(
                f"{self._label}: {self._done}/{self._total}, EX {fields['ex']}, {fields['pace']}, "
                f"ETA {fields['eta']}, {fields['tok_s']} tok/s",
                highlight=False,
            )

    def __enter__(self) -> SweepProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()


def duration(seconds: float) -> str:
    """``seconds`` the way the ETA shows it.

    >>> duration(0), duration(75), duration(3725)
    ('0 s', '1 min 15 s', '1 h 02 min')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def budget_line(
    answered: int, total: int, pace_s: float | None, budget_s: float, wanted: int = 1
) -> str:
    """What a time budget chose and why, and how to get the rest: ``answered`` of ``total``
    questions fit ``budget_s`` at ``pace_s`` seconds a question; where that is fewer than
    ``wanted`` (``sweep.min_questions``), the budget those would take here.

    >>> budget_line(6, 70, 80.2, 480).split("; ")[0]
    'this machine answers a question in ~80 s: 6 of 70 questions fit sweep.budget_s=480'
    >>> budget_line(3, 70, 150.0, 480, wanted=6).split("; ")[1]
    '6 questions would take ~15 min here (sweep.budget_s=900)'
    """
    pace = pace_s or 0.0
    short = ""
    if answered < wanted and pace:
        needed = math.ceil(wanted * pace / 60) * 60
        short = f"; {wanted} questions would take ~{needed // 60:.0f} min here (sweep.budget_s={needed:g})"
    return (
        f"this machine answers a question in ~{pace:.0f} s: {answered} of "
        f"{total} questions fit sweep.budget_s={budget_s:g}{short}; a rerun answers "
        f"more (it resumes), sweep.budget_s=null all {total}"
    )
