"""The candidate generator families: one GeneratorSpec per family, in ``GENERATORS``.

Everything that draws candidates reads this table: the orchestrator builds one generator per
entry and renders each its schema view and inputs, ``FullWidthScaling.k`` and the router's probe
widths are keyed by its names, and a family's place in it offsets its temperatures. Adding a
family is one file (its GeneratorSpec, with a SQLGenerator subclass where the stop or parsing
differ) plus its prompt and one line here; ``scaling.k`` then gives it samples.

    >>> list(GENERATORS)
    ['reasoning', 'icl/direct', 'icl/cot', 'icl/decompose']
    >>> GENERATORS["icl/cot"].view, GENERATORS["reasoning"].view
    ('light', 'ddl')
    >>> check_families({"reasoning": 1, "icl/rot13": 2}, "k")
    Traceback (most recent call last):
    ...
    pipelines.agents.errors.PipelineConfigError: k names unknown generator families ['icl/rot13']; known: [...]
"""

from __future__ import annotations

from collections.abc import Iterable

from pipelines.agents.base import GeneratorSpec, SQLGenerator
from pipelines.agents.errors import PipelineConfigError
from pipelines.agents.icl import COT, DECOMPOSE, DIRECT
from pipelines.agents.reasoning_generator import REASONING
from pipelines.settings import AgentSettings

# Order matters: a family's position offsets its temperatures (low k still spreads them).
GENERATORS: dict[str, GeneratorSpec] = {s.name: s for s in (REASONING, DIRECT, COT, DECOMPOSE)}


def check_families(names: Iterable[str], where: str) -> None:
    """Raise PipelineConfigError when ``names`` (from config ``where``) has an unregistered family."""
    unknown = [n for n in names if n not in GENERATORS]
    if unknown:
        raise PipelineConfigError(
            f"{where} names unknown generator families {unknown}; known: {list(GENERATORS)}"
        )


def build_generators(agents: AgentSettings) -> dict[str, SQLGenerator]:
    """One generator per registered family, with its ``pipeline.agents`` settings."""
    generators = {}
    for name, spec in GENERATORS.items():
        settings = getattr(agents, spec.settings, None)
        if settings is None:
            raise PipelineConfigError(
                f"generator {name!r} reads pipeline.agents.{spec.settings}, which does not exist"
            )
        generators[name] = spec.build(settings)
    return generators
