"""Strategies: the pipelines that turn a question into one SQL, each ``answer(task) -> Prediction``.

    Task ──► SinglePassPipeline   one prompt, greedy or n samples and a vote (the references)
         ──► AdaptivePipeline     a first wave; fix / widen / revise / tournament / likelihood
                                  only while the candidates disagree
         ──► Orchestrator         the full-width L1 ──► L2 ──► L3 pipeline; its DifficultyRouter
                                  picks a scaling profile per question
         ──► Prediction (+ ReasoningTrace)

``pipelines.factory.build_pipeline`` picks one from ``cfg.scaling``. They share the stages of
``pipelines.repair`` and ``pipelines.selection``.
"""

from pipelines.strategies.adaptive import AdaptivePipeline
from pipelines.strategies.orchestrator import Orchestrator
from pipelines.strategies.router import DifficultyRouter
from pipelines.strategies.single_pass import SinglePassPipeline

__all__ = ["AdaptivePipeline", "DifficultyRouter", "Orchestrator", "SinglePassPipeline"]
