"""Prompt templates, one file per agent, so they can be tuned (or compiled) without touching code.

A template file holds a ``[system]`` section and a ``[user]`` section; ``${name}`` placeholders
are filled with :class:`string.Template` (so JSON braces and SQL in the text need no escaping).
A file without a ``[system]`` section gets the shared one in ``schema_context.md`` (the schema):
every agent that reads the schema then sends the same first tokens, so a llama.cpp slot that
has evaluated them for one agent serves the next agent's call from its KV cache and evaluates
only the agent's own part (on a CPU the schema is most of each prompt's cost):

    [system: schema_context.md — the schema]  [user: agent's task, question, candidates …]
    └──────── shared by every agent's call ─┘  └──────── evaluated per call ──────────┘

    >>> prompt = load_prompt("single_pass")
    >>> sorted(prompt.placeholders)
    ['cells', 'dialect', 'evidence', 'examples', 'question', 'schema']
    >>> msgs = prompt.render(schema="CREATE TABLE t (a INT)", question="How many rows?",
    ...                      evidence="", cells="", examples="", dialect="SQLite")
    >>> [m.role for m in msgs]
    ['system', 'user']
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from string import Template

from models.types import ChatMessage

PROMPT_DIR = Path(__file__).resolve().parent
SHARED_SYSTEM = "schema_context"  # the system section of every prompt file that has none
_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


class PromptError(ValueError):
    """A prompt file is missing, malformed, or rendered without one of its placeholders."""


class PromptTemplate:
    """A system + user message pair with ``${placeholders}``."""

    def __init__(self, name: str, system: str, user: str) -> None:
        self.name = name
        self._system = Template(system)
        self._user = Template(user)

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(self._system.get_identifiers() + self._user.get_identifiers())

    def render(self, **values: object) -> tuple[ChatMessage, ...]:
        missing = self.placeholders - values.keys()
        if missing:
            raise PromptError(f"prompt {self.name!r} needs {sorted(missing)}")
        text = {k: "" if v is None else str(v) for k, v in values.items()}
        system = self._system.substitute(text).strip()
        user = self._user.substitute(text).strip()
        messages = [ChatMessage(role="system", content=system)] if system else []
        messages.append(ChatMessage(role="user", content=_squeeze_blank_lines(user)))
        return tuple(messages)


def _squeeze_blank_lines(text: str) -> str:
    # Optional sections render as "" and would otherwise leave runs of blank lines behind.
    return re.sub(r"\n{3,}", "\n\n", text)


@cache
def load_prompt(name: str, directory: str | None = None) -> PromptTemplate:
    """Read ``<directory or pipelines/prompts>/<name>.md`` (system section: its own, else the shared one)."""
    sections = _sections(Path(directory or PROMPT_DIR) / f"{name}.md")
    if "user" not in sections:
        raise PromptError(f"prompt {name!r} has no [user] section")
    system = sections.get("system")
    if system is None:
        system = _sections(PROMPT_DIR / f"{SHARED_SYSTEM}.md").get("system", "")
    return PromptTemplate(name, system, sections["user"])


def _sections(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise PromptError(f"no prompt template {path}")
    parts = _SECTION.split(path.read_text(encoding="utf-8"))
    # parts = [preamble, "system", text, "user", text]
    return dict(zip(parts[1::2], parts[2::2]))
