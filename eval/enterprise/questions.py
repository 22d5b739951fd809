"""The benchmark's question and example files: each question in a business role's voice, with
gold DuckDB SQL, its SDS ratings (``eval/sds.py``), the constructs it needs and a difficulty.

    questions.yaml
        - persona: support lead
          question: How many blocker tickets are still open?
          sql: SELECT count(*) FROM tickets WHERE severity = 'blocker' AND stage NOT IN (...)
          difficulty: simple
          sds: {D1: 2, D2: 0, D3: 0, D4: 0, D5: 1, D6: 0, D7: 0}
          sds_total: 3                 # checked against the sum
          constructs: [enum_filter]
          floor_construct: enum_filter # optional: the one nested construct a floor question exercises
    examples.yaml                      solved examples shown to pipelines, never test questions
        - question: ...
          sql: ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import model_validator

from eval.embedded_benchmark import SolvedQuestion, load_entries, refuse_test_questions
from eval.errors import EvalError
from eval.sds import SdsScores

PACKAGE_DIR = Path(__file__).resolve().parent
QUESTIONS_FILE = PACKAGE_DIR / "questions.yaml"
EXAMPLES_FILE = PACKAGE_DIR / "examples.yaml"

Persona = Literal[
    "support lead",
    "support engineer",
    "product manager",
    "engineering manager",
    "account executive",
    "customer success manager",
    "executive",
]
# What a question needs; the first five are also read off the gold SQL (eval/sql_constructs.py).
Construct = Literal[
    "unnest",
    "typed_link",
    "window",
    "cte",
    "set_op",
    "subquery",
    "self_join",
    "conditional_agg",
    "nested_field",
    "enum_filter",
    "time_window",
    "hierarchy",
]
# The nested constructs the floor questions isolate, one each: an UNNEST of a list of structs, a
# typed-link hop with its type filter, a path into a nested struct, a step up the part tree, a
# vocabulary filter, a timestamp window.
FloorConstruct = Literal[
    "unnest", "typed_link", "nested_field", "hierarchy", "enum_filter", "time_window"
]


class EnterpriseBenchmarkError(EvalError):
    """The enterprise benchmark could not be built or one of its files is invalid."""


class EnterpriseExample(SolvedQuestion):
    """A solved example of ``examples.yaml``: shown to pipelines, never a test question."""


class EnterpriseQuestion(EnterpriseExample):
    """One question of ``questions.yaml``."""

    persona: Persona
    difficulty: Literal["simple", "moderate", "challenging"]
    sds: SdsScores
    sds_total: int
    constructs: tuple[Construct, ...]
    floor_construct: FloorConstruct | None = None  # a floor question: the construct it exercises

    @model_validator(mode="after")
    def _total_is_the_sum(self) -> EnterpriseQuestion:
        if self.sds_total != self.sds.total:
            raise ValueError(
                f"sds_total {self.sds_total} is not the sum of its scores ({self.sds.total})"
            )
        if self.floor_construct is not None and self.floor_construct not in self.constructs:
            raise ValueError(
                f"floor_construct {self.floor_construct!r} is not among {self.constructs}"
            )
        return self


def load_questions(path: Path = QUESTIONS_FILE) -> tuple[EnterpriseQuestion, ...]:
    """The questions; a malformed file raises ``EnterpriseBenchmarkError``."""
    return load_entries(
        path,
        EnterpriseQuestion,
        benchmark="enterprise",
        kind="question",
        error=EnterpriseBenchmarkError,
    )


def load_examples(path: Path = EXAMPLES_FILE) -> tuple[EnterpriseExample, ...]:
    """The solved examples; a malformed file, or one that holds a test question, raises."""
    examples = load_entries(
        path,
        EnterpriseExample,
        benchmark="enterprise",
        kind="example",
        error=EnterpriseBenchmarkError,
    )
    refuse_test_questions(examples, load_questions(), path, EnterpriseBenchmarkError)
    return examples
