"""The enterprise questions as an instrument: every gold SQL and every solved example runs on the
pinned DuckDB, and the answers a competent analyst would plausibly write are graded as they
should be. No model runs.

    python benchmarks/enterprise_audit.py [--data-dir DIR] [--questions FILE]
                                          [--alternatives FILE] [--all]

``benchmarks/enterprise_alternatives.yaml`` holds, per question position, SQL an analyst could
write for it: ``answers: true`` where it answers the question as stated (another column order,
an extra id, an unrounded value, another equivalent formulation), ``answers: false`` where it
is a plausible misreading the question rules out (a vocabulary value it excludes, a tie rule it
does not state). Each runs beside the gold through the read-only sandbox and is graded under
EX BIRD, EX Spider and column matching (``eval.grading.scoring.execution_verdicts``):

    questions.yaml gold ║ alternative ──► Sandbox ──► accepted / rejected under each semantics
                                                   ──► one line per alternative (--all: per question)
                                                   ──► counts: right ones accepted, wrong ones rejected

Exit status 1 when a gold query or an example fails to run, a right alternative is rejected or
a wrong one accepted under column matching, or an alternative names a position past the file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml

from core.types import Frozen
from eval.embedded_benchmark import one_line
from eval.enterprise import build_enterprise, load_examples, load_questions
from eval.enterprise.questions import QUESTIONS_FILE
from eval.grading.scoring import ExecutionVerdicts, execution_verdicts
from pipelines.contracts import DatabaseRef
from pipelines.sandbox import Sandbox

ALTERNATIVES_FILE = Path(__file__).resolve().parent / "enterprise_alternatives.yaml"
SEMANTICS = ("ex_bird", "ex_spider", "ex_columns")
HEADERS = ("EX BIRD", "EX Spider", "columns")


class Alternative(Frozen):
    """One plausible SQL for the question at ``question`` (0-based position)."""

    question: int
    why: str
    answers: bool  # True: it answers the question as stated and must pass column matching
    sql: str


class Graded(Frozen):
    alternative: Alternative
    verdicts: ExecutionVerdicts
    error: str | None


def load_alternatives(path: Path) -> tuple[Alternative, ...]:
    return tuple(Alternative(**entry) for entry in yaml.safe_load(path.read_text("utf-8")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, help="build here (default: a temporary dir)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS_FILE)
    parser.add_argument("--alternatives", type=Path, default=ALTERNATIVES_FILE)
    parser.add_argument("--all", action="store_true", help="a line for every question")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        paths = build_enterprise(args.data_dir or Path(scratch))
        return audit(args, paths.database_ref())


def audit(args: argparse.Namespace, db: DatabaseRef) -> int:
    questions = load_questions(args.questions)
    alternatives = load_alternatives(args.alternatives)
    failures: list[str] = []
    beyond = [a for a in alternatives if a.question >= len(questions)]
    failures += [f"alternative for Q{a.question}: no such question" for a in beyond]
    graded: list[Graded] = []
    with Sandbox(timeout_s=60, row_cap=100_000) as box:
        for index, question in enumerate(questions):
            gold_sql = one_line(question.sql)
            gold = box.execute(gold_sql, db)
            if not gold.ok or gold.truncated:
                failures.append(f"Q{index} gold: {gold.error or 'truncated'}")
                continue
            mine = [a for a in alternatives if a.question == index]
            if args.all or mine:
                print(f"Q{index}  gold: {gold.row_count} rows  {question.question[:90]}")
            for alternative in mine:
                pred = box.execute(one_line(alternative.sql), db)
                verdicts = execution_verdicts(pred, gold, gold_sql)
                graded.append(Graded(alternative=alternative, verdicts=verdicts, error=pred.error))
                marks = "  ".join(
                    f"{h} {'ok' if getattr(verdicts, s) else '--'}"
                    for h, s in zip(HEADERS, SEMANTICS, strict=True)
                )
                kind = "right" if alternative.answers else "wrong"
                print(f"    {kind}  {marks}  {alternative.why}")
                if pred.error:
                    print(f"           error: {pred.error.splitlines()[0][:100]}")
                if verdicts.ex_columns != alternative.answers:
                    failures.append(
                        f"Q{index} {kind} alternative "
                        f"{'rejected' if alternative.answers else 'accepted'}: {alternative.why}"
                    )
        for index, example in enumerate(load_examples()):
            result = box.execute(one_line(example.sql), db)
            if not result.ok:
                failures.append(f"example {index}: {result.error}")
    print_counts(graded, len(questions), len(load_examples()), failures)
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


def print_counts(graded: list[Graded], questions: int, examples: int, failures: list[str]) -> None:
    broken = sum(f.startswith("Q") and " gold: " in f for f in failures)
    broken_examples = sum(f.startswith("example ") for f in failures)
    print()
    print(f"gold SQL that runs: {questions - broken} / {questions}")
    print(f"examples that run:  {examples - broken_examples} / {examples}")
    print(f"questions with alternatives: {len({g.alternative.question for g in graded})}")
    print()
    print(f"| alternatives | n | {' | '.join(HEADERS)} |")
    print("|---|---|" + "---|" * len(HEADERS))
    for answers, verb in ((True, "accepted"), (False, "rejected")):
        rows = [g for g in graded if g.alternative.answers is answers]
        counts = [sum(getattr(g.verdicts, s) is answers for g in rows) for s in SEMANTICS]
        label = "right (answers the question)" if answers else "wrong (a misreading)"
        cells = " | ".join(f"{c} {verb}" for c in counts)
        print(f"| {label} | {len(rows)} | {cells} |")


if __name__ == "__main__":
    sys.exit(main())
