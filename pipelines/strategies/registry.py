"""The strategies by name: ``scaling.strategy`` picks one, and its settings are the ``scaling``
config group (``conf/scaling/<profile>.yaml``, on top of the ``base_<name>`` node of its
settings' defaults that ``core.config`` stores from here). A new strategy is its module and one
line here.

    >>> type(scaling_from({"strategy": "single_pass", "samples": 8})).__name__
    'SinglePassScaling'
    >>> strategy_class("adaptive").__name__
    'AdaptivePipeline'
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from typing import Annotated, Any, Union

from omegaconf import DictConfig, OmegaConf
from pydantic import Field, TypeAdapter

from pipelines.strategies.base import Strategy
from pipelines.strategies.scaling import StrategyScaling

# name ──► "module:Class" of its Strategy (imported on first use)
STRATEGIES: dict[str, str] = {
    "single_pass": "pipelines.strategies.single_pass:SinglePassPipeline",
    "adaptive": "pipelines.strategies.adaptive:AdaptivePipeline",
    "agentic": "pipelines.strategies.agentic:AgenticPipeline",
    "full_width": "pipelines.strategies.orchestrator:Orchestrator",
}


def strategy_class(name: str) -> type[Strategy]:
    if name not in STRATEGIES:
        raise ValueError(f"no strategy {name!r}: one of {', '.join(STRATEGIES)}")
    module, cls = STRATEGIES[name].split(":")
    return getattr(importlib.import_module(module), cls)


def settings_models() -> dict[str, type[StrategyScaling]]:
    """Each strategy's settings model, by name."""
    return {name: strategy_class(name).Settings for name in STRATEGIES}


@functools.cache
def _adapter() -> TypeAdapter:
    models = tuple(settings_models().values())
    return TypeAdapter(Annotated[Union[models], Field(discriminator="strategy")])  # noqa: UP007


def scaling_from(node: Mapping[str, Any]) -> StrategyScaling:
    """``node`` (the ``scaling`` group) as the settings of the strategy it names."""
    return _adapter().validate_python(dict(node))


def scaling_settings(cfg: DictConfig) -> StrategyScaling:
    """The composed config's ``scaling`` section as its strategy's settings."""
    return scaling_from(OmegaConf.to_container(cfg.scaling, resolve=True))
