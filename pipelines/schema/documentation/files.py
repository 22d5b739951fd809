"""Documentation files read in turn: each existing one is read, an unreadable one is skipped
with a warning, and the caller decides how many it needs.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("docs")
    >>> [(p.name, text) for p, text in readable(
    ...     [folder / "missing.txt", folder / "a.txt"], Path.read_text, (OSError,), "notes file")]
    [('a.txt', 'docs')]
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


def readable(
    paths: Iterable[Path],
    read: Callable[[Path], T],
    errors: tuple[type[Exception], ...],
    what: str,
) -> Iterator[tuple[Path, T]]:
    """``(path, read(path))`` for each file of ``paths`` that exists and reads without one of
    ``errors`` (logged as an unreadable ``what``), in order and only as far as the caller asks."""
    for path in paths:
        if not path.is_file():
            continue
        try:
            value = read(path)
        except errors as exc:
            log.warning("skipping unreadable %s %s: %s", what, path, exc)
            continue
        yield path, value
