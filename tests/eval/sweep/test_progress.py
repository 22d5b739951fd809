import io

import polars as pl
from rich.console import Console

from eval.sweep.progress import SweepProgress
from eval.sweep.records import QuestionRecord, records_to_table


def rec(i, ex, tokens=100):
    return QuestionRecord(
        task_id=f"t:{i}",
        position=i,
        benchmark="b",
        db_id="d",
        question="q",
        sql="s",
        ex_bird=ex,
        prompt_tokens=tokens,
        completion_tokens=0,
    )


def test_progress_counts_done_ex_so_far_and_resumed_rows():
    previous = pl.from_arrow(records_to_table([rec(0, True), rec(1, False), rec(2, None)]))
    out = io.StringIO()
    console = Console(file=out, width=150, force_terminal=True)
    with SweepProgress(total=10, label="run", previous=previous, console=console) as bar:
        assert bar.ex_so_far == 0.5
        bar.advance(rec(3, True, tokens=500))
        bar.advance(rec(4, True, tokens=500))
    assert bar.ex_so_far == 0.75
    text = out.getvalue()
    assert "5/10" in text and "EX 0.750" in text and "tok/s" in text
