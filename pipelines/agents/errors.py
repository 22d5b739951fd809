"""Typed errors of the pipeline's agents and orchestrator."""

from __future__ import annotations

from core.errors import ProjectError


class PipelineError(RuntimeError):
    """Base of the query pipeline's own errors."""


class CallCapExceeded(PipelineError):
    """A task asked for more LLM calls than its strategy allows (a safety net: the
    orchestrator treats it like an exhausted budget and returns the best candidate so far)."""


class AgentOutputError(PipelineError):
    """An agent's reply could not be turned into its typed output (bad JSON, no SQL, ...)."""


class PipelineConfigError(PipelineError, ValueError, ProjectError):
    """The pipeline configuration is inconsistent (unknown strategy, missing prompt, ...)."""
