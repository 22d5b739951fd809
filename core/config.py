"""Hydra configuration, composed with the compose API so every subcommand takes overrides.

``section`` reads a part of the composed config back as its model.

    >>> cfg = load_config(["benchmark=demo", "scaling=single_pass"])
    >>> cfg.benchmark.name
    'demo'

A section as its model: ``section(cfg, "scaling", ScalingConfig)`` (from ``pipelines.contracts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Sequence, TypeVar

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf
from pydantic import BaseModel

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
REPO_ROOT = CONF_DIR.parent

if not OmegaConf.has_resolver("repo_root"):
    OmegaConf.register_new_resolver("repo_root", lambda: str(REPO_ROOT))

M = TypeVar("M", bound=BaseModel)


def load_config(overrides: Sequence[str] = (), config_name: str = "config") -> DictConfig:
    """Compose ``conf/<config_name>.yaml`` with Hydra ``key=value`` overrides."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name=config_name, overrides=list(overrides))
    OmegaConf.resolve(cfg)
    return cfg


def section(cfg: Mapping[str, Any] | None, path: str, model: type[M]) -> M:
    """The config at dotted ``path`` (``""``: ``cfg`` itself) as ``model``; absent, its defaults.

    The one way a config section becomes its model: a key the model lacks is an error.
    """
    node: Any = cfg
    for key in path.split(".") if path else ():
        node = node.get(key) if node is not None else None
    if isinstance(node, DictConfig):
        node = OmegaConf.to_container(node, resolve=True)
    return model.model_validate(node if node is not None else {})
