"""Typed errors of the agentic mode's deterministic layer."""

from __future__ import annotations

from core.errors import ProjectError
from pipelines.agents.errors import PipelineConfigError, PipelineError


class TaxonomyError(PipelineConfigError):
    """The error taxonomy file is missing, malformed, or lacks a class the code emits."""


class CheatsheetError(PipelineError, ProjectError):
    """A cheatsheet file cannot be read or is corrupt (its rules are never silently dropped), or
    its lock cannot be taken; the message names the file."""
