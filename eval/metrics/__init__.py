"""Scoring metrics: execution accuracy (BIRD and Spider semantics), R-VES, pass@k; per-surface
metrics of reasoning traces in ``eval.metrics.traces``."""

from eval.metrics.efficiency import DEFAULT_ITERATIONS, r_ves, time_ratio, ves_reward
from eval.metrics.execution import comparable_cell, ex_bird, ex_spider, order_matters
from eval.metrics.sampling import pass_at_k

__all__ = [
    "DEFAULT_ITERATIONS",
    "comparable_cell",
    "ex_bird",
    "ex_spider",
    "order_matters",
    "pass_at_k",
    "r_ves",
    "time_ratio",
    "ves_reward",
]
