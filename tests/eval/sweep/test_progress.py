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


def test_the_eta_is_the_questions_left_at_this_invocations_pace(monkeypatch):
    import eval.sweep.progress as progress

    now = [100.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    previous = pl.from_arrow(records_to_table([rec(0, True), rec(1, True)]))
    out = io.StringIO()
    console = Console(file=out, width=200)  # a log file: one line per question
    with SweepProgress(total=12, label="adaptive", previous=previous, console=console) as bar:
        now[0] += 80
        bar.advance(rec(2, False))
        now[0] += 40
        bar.advance(rec(3, True))
    lines = [line for line in out.getvalue().splitlines() if line.startswith("adaptive:")]
    # resumed rows count as done, not toward the pace: 60 s a question, 8 left
    assert lines[-1] == "adaptive: 4/12, EX 0.750, 60.0 s/question here, ETA 8 min 00 s, 2 tok/s"
    assert lines[0].startswith("adaptive: 3/12, EX 0.667, 80.0 s/question here, ETA 12 min 00 s")


def test_under_a_time_budget_the_eta_is_never_past_its_end(monkeypatch):
    import eval.sweep.progress as progress

    now = [0.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    out = io.StringIO()
    console = Console(file=out, width=200)
    with SweepProgress(total=70, label="demo", console=console, budget_s=480) as bar:
        now[0] += 100
        bar.advance(rec(0, True))  # 69 left at 100 s each, but the budget ends in 380 s
    assert "ETA 6 min 20 s" in out.getvalue()


def test_progress_counts_only_this_subsets_questions_of_a_shared_run_directory():
    from eval.sweep.driver import answered_before
    from pipelines.contracts import DatabaseRef, Task

    # the run directory holds the tuning half (even) and part of the held-out half (odd)
    done = pl.from_arrow(records_to_table([rec(i, i % 4 == 0) for i in (0, 1, 2, 3, 4)]))
    db = DatabaseRef(db_id="d", path="/nonexistent.sqlite")
    held_out = [Task(task_id=f"t:{i}", question="q", db=db) for i in (1, 3, 5, 7)]
    previous = answered_before(done, held_out, finished={"t:0", "t:1", "t:2", "t:3", "t:4"})
    assert previous.get_column("task_id").to_list() == ["t:1", "t:3"]
    with SweepProgress(total=4, label="run", previous=previous, enabled=False) as bar:
        assert bar.ex_so_far == 0.0
