"""Strategies: the pipelines that turn a question into one SQL, each ``answer(task) -> Prediction``.

    Task ──► SinglePassPipeline   one prompt, greedy or n samples and a vote (the references)
         ──► AdaptivePipeline     a first wave; fix / widen / revise / tournament / likelihood
                                  only while the candidates disagree
         ──► AgenticPipeline      one generation at a time: schema tools, the checker chain,
                                  classified errors and their repair directives
         ──► Orchestrator         the full-width L1 ──► L2 ──► L3 pipeline; its DifficultyRouter
                                  picks a scaling profile per question
         ──► Prediction (+ ReasoningTrace)

Each is a ``Strategy`` (``base.py``: the client, executor, scaling and trace sinks they share).
``pipelines.factory.build_pipeline`` picks one from ``cfg.scaling``. They share the stages of
``pipelines.repair`` and ``pipelines.selection``.
"""

from pipelines.strategies.adaptive import AdaptivePipeline
from pipelines.strategies.agentic import AgenticPipeline
from pipelines.strategies.base import Strategy
from pipelines.strategies.orchestrator import Orchestrator
from pipelines.strategies.router import DifficultyRouter
from pipelines.strategies.single_pass import SinglePassPipeline

__all__ = [
    "AdaptivePipeline",
    "AgenticPipeline",
    "DifficultyRouter",
    "Orchestrator",
    "SinglePassPipeline",
    "Strategy",
]
