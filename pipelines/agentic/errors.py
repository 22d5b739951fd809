"""Typed errors of the agentic mode's deterministic layer."""

from __future__ import annotations

from pipelines.agents.errors import PipelineConfigError


class TaxonomyError(PipelineConfigError):
    """The error taxonomy file is missing, malformed, or lacks a class the code emits."""
