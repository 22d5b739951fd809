"""The sweep's progress bar: questions done / total, EX so far, ETA, tokens per second.

    with SweepProgress(total=108, label="single_pass", previous=store.read()) as bar:
        for record in records:
            bar.advance(record)

``previous`` (rows finished before a resume) counts toward done and EX but not toward the
token rate, which measures this invocation only.
"""

from __future__ import annotations

import time

import polars as pl
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from eval.sweep.records import QuestionRecord


class SweepProgress:
    def __init__(
        self,
        total: int,
        label: str,
        previous: pl.DataFrame | None = None,
        enabled: bool = True,
        console: Console | None = None,
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
        self._tokens = 0
        self._started = time.perf_counter()
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("EX {task.fields[ex]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[tok_s]} tok/s"),
            console=console,
            disable=not enabled,
        )
        self._task = self._progress.add_task(
            label, total=total, completed=done, ex=self._ex(), tok_s="-"
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
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        self._progress.update(
            self._task, advance=1, ex=self._ex(), tok_s=f"{self._tokens / elapsed:.0f}"
        )

    def __enter__(self) -> SweepProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
