"""Bad input on the command line becomes one line on stderr and exit code 2, never a traceback.

    try:
        cfg = load_config(overrides)
    except user_errors() as exc:
        return fail("scale-analytics eval", exc)     # "scale-analytics eval: Could not find ..."

``user_errors()`` are the errors a user's input causes: Hydra overrides that do not parse or
name nothing, config values that do not validate, missing or unreadable files, and the
project's typed errors (``core.errors.ProjectError``: benchmark data, predictions files, run
directories, models, pipeline configuration, indexes). Anything else is a bug and keeps its
traceback. ``SCALE_ANALYTICS_TRACEBACK=1`` re-raises user errors too, for debugging.
"""

from __future__ import annotations

import json
import os
import sys

EXIT_USAGE = 2
# Lines of Hydra / OmegaConf / pydantic messages that add nothing on one line.
_NOISE = (
    "See https://",
    "For further information visit",
    "full_key:",
    "object_type=",
    "reference_type=",
)
_STOP = ("Available options", "Config search path")  # the rest of the message is a listing


def user_errors() -> tuple[type[BaseException], ...]:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException
    from pydantic import ValidationError

    from core.errors import ProjectError

    return (
        HydraException,
        OmegaConfBaseException,
        ValidationError,
        ProjectError,
        OSError,
        UnicodeError,
        json.JSONDecodeError,
    )


def one_line(exc: BaseException) -> str:
    """``exc`` and its causes as one line: first the message, then what each cause adds."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()
        )
        return f"invalid {exc.title}: {problems}"
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for line in str(current).splitlines():
            line = line.strip()
            if line.startswith(_STOP):
                break
            line = line.rstrip(".:;")
            if (
                line.strip("^ ") == ""
                or line == "None"
                or line.startswith(_NOISE)
                or any(line in p for p in parts)
            ):
                continue  # empty, a caret under the parser's position, or said already
            parts.append(line)
        current = current.__cause__
    override = getattr(exc, "override", None)  # Hydra's OverrideParseException
    if override is not None:
        parts = [f"cannot parse the override {override!r}"] + [
            p for p in parts if not p.startswith("Error parsing")
        ]
    text = ": ".join(parts) or type(exc).__name__
    options = getattr(exc, "options", None)  # Hydra's MissingConfigException: the group's choices
    return text + (f" (available: {', '.join(options)})" if options else "")


def fail(prog: str, exc: BaseException) -> int:
    """Print ``prog: <one line>`` to stderr and return the exit code for bad input."""
    if os.environ.get("SCALE_ANALYTICS_TRACEBACK"):
        raise exc
    print(f"{prog}: {one_line(exc)}", file=sys.stderr)
    return EXIT_USAGE
