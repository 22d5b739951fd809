"""What ``eval`` does to each answered question beyond grading it (the ``eval`` config group).

>>> EvalSettings().judge is None
True
"""

from __future__ import annotations

from pydantic import Field

from core.types import Frozen


class EvalSettings(Frozen):
    """The Answer Correctness judge (``eval/grading/judge.py``): off unless ``judge`` names a slot of the
    model config, whose model then judges every answer once it is graded."""

    judge: str | None = None
    judge_preview_rows: int = Field(default=5, ge=1)  # result rows the judge sees
    judge_max_tokens: int = Field(default=256, ge=32)
