"""Selection: one answer out of a pool of executed candidates.

candidates ──► ExecutionBucketer ──► buckets (same result, one bucket)
           ──► majority_vote       buckets ranked by size (no LLM)
           ──► Tournament          ReasoningSelector on pairs of bucket representatives
           ──► LikelihoodSelector  the SQL the model finds most probable, teacher-forced
"""

from pipelines.selection.bucketing import ExecutionBucketer
from pipelines.selection.likelihood import LikelihoodSelector
from pipelines.selection.tournament import (
    Tournament,
    TournamentQuestion,
    TournamentResult,
    majority_vote,
)

__all__ = [
    "ExecutionBucketer",
    "LikelihoodSelector",
    "Tournament",
    "TournamentQuestion",
    "TournamentResult",
    "majority_vote",
]
