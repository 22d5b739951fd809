"""Hydra configuration, composed with the compose API so every subcommand takes overrides.

Every default lives once, on its pydantic model. Each model-backed config group has a ``base``
node holding the model's defaults (``BASES``, put in Hydra's ConfigStore before the first
compose); the group's YAML files list it first in their defaults and state only what differs,
so a ``key=value`` override reaches every field without ``+``. ``section`` reads a part of the
composed config back as its model.

    >>> cfg = load_config(["benchmark=demo", "scaling=single_pass"])
    >>> cfg.benchmark.name
    'demo'
    >>> cfg.scaling.strategy, cfg.sweep.workers   # no YAML names sweep.workers: its default
    ('single_pass', 1)

A section as its model: ``section(cfg, "pipeline", PipelineSettings)``; the ``scaling`` group is
the settings of the strategy it names (``pipelines.strategies.registry.scaling_settings``).
A model that configuration validates into is named ``…Settings`` (``PipelineSettings``,
``ModelSettings``, ``SweepSettings``, ``ServeSettings`` and their parts), a strategy's
``…Scaling``.
"""

from __future__ import annotations

import functools
import importlib
import math
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from core.errors import ProjectError

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
REPO_ROOT = CONF_DIR.parent

if not OmegaConf.has_resolver("repo_root"):
    OmegaConf.register_new_resolver("repo_root", lambda: str(REPO_ROOT))
if not OmegaConf.has_resolver("mul"):
    # A slot's hourly price from the price list: ${mul:${prices.gpu_hour},${..tensor_parallel_size}}
    OmegaConf.register_new_resolver("mul", lambda *factors: math.prod(factors))
if not OmegaConf.has_resolver("working_copy"):
    # paths.working: ${working_copy:${.storage},${.cache}}
    OmegaConf.register_new_resolver("working_copy", lambda s, c: working_copy(s, c))

# ConfigStore node ("group/name") -> the model ("module:Class") whose defaults it holds. Composing
# the config needs every layer's models; like core.cli's handlers they are named by path and
# imported at the first compose, so importing core imports no layer. A ``base_*`` node sits under
# a key of its group (``- base_index@index``).
BASES: dict[str, str] = {
    "pipeline/base": "pipelines.settings:PipelineSettings",
    "pipeline/base_index": "pipelines.indexing.settings:IndexSettings",  # pipeline.index
    "sweep/base": "eval.sweep.config:SweepSettings",
    "benchmark/base": "eval.loaders.common:BenchmarkSpec",
    "model/base": "models.config:ModelSettings",
    "serve/base": "serve.settings:ServeSettings",
    "eval/base": "eval.settings:EvalSettings",
}
# Config group -> "module:function" giving {name: model}: each model's defaults are stored as the
# group's ``base_<name>`` node (the ``scaling`` group: one per strategy, from its registry).
REGISTERED_BASES: dict[str, str] = {
    "scaling": "pipelines.strategies.registry:settings_models",
}

M = TypeVar("M", bound=BaseModel)


def load_config(overrides: Sequence[str] = (), config_name: str = "config") -> DictConfig:
    """Compose ``conf/<config_name>.yaml`` with Hydra ``key=value`` overrides."""
    _store_bases()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name=config_name, overrides=list(overrides))
    OmegaConf.resolve(cfg)
    _check_storage(cfg)
    return cfg


class UnsupportedStorage(ProjectError):
    """``paths.storage`` is a URI whose scheme no ``pyarrow.fs`` filesystem resolves."""


def working_copy(storage: str, cache: str) -> str:
    """Where a node keeps what lies under ``paths.storage``: a directory is used in place; a URI
    (object storage) gets a copy on the node's own disk under ``cache``, laid out as the URI's
    keys are (``eval/sweep/storage.py`` keeps the two in step).

    >>> working_copy("/mnt/shared/sa", "/home/me/.cache")
    '/mnt/shared/sa'
    >>> working_copy("s3://bucket/sa?endpoint_override=127.0.0.1:9000", "/home/me/.cache")
    '/home/me/.cache/storage/s3/bucket/sa'
    """
    if "://" not in storage:
        return storage
    scheme, rest = storage.split("://", 1)
    location = rest.split("?", 1)[0].rsplit("@", 1)[-1].strip("/")  # no query, no credentials
    return f"{cache}/storage/{scheme}/{location}"


def _check_storage(cfg: DictConfig) -> None:
    # Taken as a path, "s3x://b" would quietly be a local folder: a URI's scheme must resolve.
    storage = str(OmegaConf.select(cfg, "paths.storage", default="") or "")
    if "://" not in storage:
        return
    import pyarrow
    from pyarrow import fs

    scheme = storage.split("://", 1)[0]
    try:
        fs.FileSystem.from_uri(f"{scheme}://")
    except pyarrow.ArrowInvalid as exc:
        if "Unrecognized filesystem type" in str(exc):
            raise UnsupportedStorage(
                f"paths.storage={storage}: pyarrow.fs has no filesystem for {scheme}://; use a "
                "directory or a URI it resolves, such as s3://bucket/prefix (docs/sweeps.md, Storage)"
            ) from None
    except OSError:
        pass  # known, but not usable here (hdfs:// without Java): said when the run reaches it


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


def model_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s defaulted fields as plain config values.

    Required fields are left to the YAML. An optional sub-model that defaults to None is a
    section a profile turns on, with that sub-model's own base node; until then it is absent.
    """
    return {
        name: _plain(field.get_default(call_default_factory=True))
        for name, field in model.model_fields.items()
        if not field.is_required() and not _optional_section(field)
    }


def _optional_section(field: FieldInfo) -> bool:
    return field.default is None and any(
        isinstance(arg, type) and issubclass(arg, BaseModel)
        for arg in typing.get_args(field.annotation)
    )


def _plain(value: Any) -> Any:
    # Field values as written (not model_dump's): an int default of a float field stays an int,
    # as it is in YAML, so the resolved config (and every run's identity hash) is unchanged.
    if isinstance(value, BaseModel):
        return {name: _plain(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


@functools.cache
def _store_bases() -> None:
    store = ConfigStore.instance()
    for node, target in BASES.items():
        group, name = node.split("/")
        store.store(group=group, name=name, node=model_defaults(_imported(target)))
    for group, target in REGISTERED_BASES.items():
        for name, model in _imported(target)().items():
            store.store(group=group, name=f"base_{name}", node=model_defaults(model))


def _imported(target: str) -> Any:
    module, attribute = target.split(":")
    return getattr(importlib.import_module(module), attribute)
