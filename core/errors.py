"""The base of the project's typed errors.

Each layer's error family (benchmark data and predictions files, models, pipeline configuration,
indexes) derives from :class:`ProjectError`, so the command line can report any of them on one
line without importing the layer that raises it (``core.cli_errors``).
"""

from __future__ import annotations


class ProjectError(Exception):
    """An error that names what failed and what to do about it: reported on one line, without a
    traceback. Anything else is a bug and keeps its traceback."""
