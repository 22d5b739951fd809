"""Typed errors of the evaluation layer. Each names the file or value at fault.

EvalError
├── BenchmarkDataError      a benchmark's files are missing or malformed
└── PredictionsFormatError  a predictions file cannot be read in the format asked for
"""

from __future__ import annotations

from core.errors import ProjectError


class EvalError(ProjectError, RuntimeError):
    """Base of every evaluation-layer error."""


class BenchmarkDataError(EvalError):
    """A benchmark's question file is missing, unreadable, or lacks a required field."""


class PredictionsFormatError(EvalError):
    """A predictions file does not match its declared format (or names unknown questions)."""
