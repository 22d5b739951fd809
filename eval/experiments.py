"""Expand command-line overrides into the configurations an ``eval`` invocation runs.

Subcommands compose config with Hydra's compose API, which has no multirun, so it is done here:

    --multirun scaling=default,single_pass model=a,b   ──► 4 configurations (Hydra's basic sweeper:
                                                           the cartesian product of comma lists)
    experiment=ablation                                 ──► one configuration per entry of
                                                           ``experiment.variants`` (name → overrides)
    experiment=ablation 'experiment.only=[a,b]'         ──► only the variants named (one variant per
                                                           invocation: long runs stay short)

    >>> from core.config import load_config
    >>> [c.label for c in expand(["scaling=default,single_pass"], load_config, multirun=True)]
    ['scaling=default', 'scaling=single_pass']

Each configuration is composed and validated here, once: what the run reads (``sweep``,
``model``, ``prices``, ``eval``, ``benchmark``, the experiment) travels typed on its
:class:`Configuration`, with the run's identity and directory.

The run directory is named by a hash of the configuration's *content* (model, scaling,
benchmark, pipeline, seed, and the judge when one is on), so rerunning the same command resumes
the same directory, and changing any of those starts a fresh one. Resource shapes (``sweep``),
paths, the experiment and prices (``prices``, each slot's ``price``) are not part of the hash:
resuming on a bigger machine continues the same run, and a question keeps the cost it was
answered at. Nor is the subset (``benchmark.limit/stride/offset``): predictions are per
question, so a run grows — ``benchmark.limit=12`` first, the whole subset later, the first 12
never recomputed — and its metrics, exports and report always cover exactly the questions of
this invocation.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from core.config import section
from core.types import Frozen
from eval.errors import EvalError
from eval.loaders.common import SUBSET_FIELDS, BenchmarkSpec
from eval.settings import EvalSettings
from eval.sweep.config import SweepSettings
from models.budget import PriceList
from models.config import ModelSettings

# Overrides that change where or how a run executes, not what it computes: not part of labels.
_NOT_LABELS = ("sweep", "paths", "experiment", "hydra", "log_level")
# Which questions a run covers: not part of its name, so a run grows across invocations.
_SUBSET_KEYS = tuple(f"benchmark.{key}" for key in SUBSET_FIELDS)


_NOT_IDENTITY = ("paths", "sweep", "experiment", "log_level", "serve", "prices")
# Beside those sections, keys that are not part of a run's identity: they may change when it
# resumes, so MLflow gets them as tags, not as (immutable) params.
_MUTABLE_PARAMS = (
    *(f"benchmark.{key}" for key in SUBSET_FIELDS),
    "model.response_cache",
    "model.replay_latency",
)
_PARAM_VALUE_LIMIT = 6000  # MLflow's longest param value
_SLOT_PRICE = re.compile(r"model\.slots\.[^.]+\.price\.")


class Configuration(Frozen):
    """One configuration of an ``eval`` invocation, composed and validated once (:meth:`of`)."""

    label: str  # the MLflow run name and the run directory's stem
    overrides: tuple[str, ...]
    config: dict[str, Any]  # the composed config, resolved: what the pipelines are built from
    identity: str  # hash of what the configuration computes (config_identity)
    run_dir: str  # runs/<experiment>/<label>-<identity>, unless sweep.run_dir names one
    sweep: SweepSettings
    model: ModelSettings
    prices: PriceList
    evaluation: EvalSettings
    benchmark: BenchmarkSpec
    experiment: str
    tracking_uri: str
    baseline: str | None = None  # the variant the others are measured against
    # the flattened config as MLflow params: what is the run's identity, and (as tags) the rest
    params: dict[str, str] = {}
    mutable_params: dict[str, str] = {}

    @classmethod
    def of(cls, label: str, overrides: Sequence[str], cfg: DictConfig) -> Configuration:
        identity = config_identity(cfg)
        config = OmegaConf.to_container(cfg, resolve=True)
        flat = flatten(config)  # type: ignore[arg-type]
        identity_keys = {key for key in flat if _is_identity(key, config)}  # type: ignore[arg-type]
        return cls(
            label=label,
            overrides=tuple(overrides),
            config=config,  # type: ignore[arg-type]
            identity=identity,
            run_dir=str(run_dir_for(cfg, label, identity)),
            sweep=SweepSettings.from_cfg(cfg),
            model=section(cfg, "model", ModelSettings),
            prices=section(cfg, "prices", PriceList),
            evaluation=section(cfg, "eval", EvalSettings),
            benchmark=section(cfg, "benchmark", BenchmarkSpec),
            experiment=str(cfg.experiment.name),
            tracking_uri=str(cfg.experiment.tracking_uri),
            baseline=OmegaConf.select(cfg, "experiment.baseline"),
            params={k: v for k, v in flat.items() if k in identity_keys},
            mutable_params={k: v for k, v in flat.items() if k not in identity_keys},
        )

    @property
    def cfg(self) -> DictConfig:
        """The composed config, for what reads it as Hydra config (index builds, the pipelines)."""
        return OmegaConf.create(self.config)


def _is_identity(key: str, config: dict[str, Any]) -> bool:
    """Whether the flattened config ``key`` (``scaling.k_icl``) is part of the run's identity:
    the others may change when it resumes, so MLflow gets them as tags, not params."""
    return not (
        key in _MUTABLE_PARAMS
        or key.split(".", 1)[0] in _not_identity(config)
        or _SLOT_PRICE.match(key) is not None
    )


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"scaling.k_icl": "2", ...}``: a nested config as MLflow params (lists stay one value).

    >>> flatten({"scaling": {"k_icl": 2, "icl_strategies": ["direct", "cot"]}})
    {'scaling.k_icl': '2', 'scaling.icl_strategies': "['direct', 'cot']"}
    """
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = str(value)[:_PARAM_VALUE_LIMIT]
    return flat


def _not_identity(config: DictConfig | dict[str, Any]) -> tuple[str, ...]:
    # A judge adds its verdicts to every row, so a run with one is another run; without one the
    # eval section computes nothing and leaves the hash as it is.
    judged = (config.get("eval") or {}).get("judge") is not None
    return _NOT_IDENTITY if judged else (*_NOT_IDENTITY, "eval")


def config_identity(cfg: DictConfig) -> str:
    """Hash of what the configuration computes (not where or with how many actors)."""
    excluded = _not_identity(cfg)
    resolved = OmegaConf.to_container(cfg, resolve=True)
    content = {k: v for k, v in resolved.items() if k not in excluded}  # type: ignore[union-attr]
    content.get("pipeline", {}).pop("trace", None)  # where traces go is not what is computed
    cheatsheet = content.get("pipeline", {}).get("cheatsheet")
    if cheatsheet:  # where the learned rules are kept is not what is computed; whether they are is
        cheatsheet["root"] = cheatsheet.get("root") is not None
    for key in SUBSET_FIELDS:
        content.get("benchmark", {}).pop(key, None)
    content.get("model", {}).pop("response_cache", None)  # same requests, same distribution
    content.get("model", {}).pop("replay_latency", None)  # a cached reply's pace, as computed
    for slot in content.get("model", {}).get("slots", {}).values():
        slot.pop("price", None)  # what a call costs, not what it computes
    canonical = json.dumps(content, sort_keys=True, default=str)
    # a location under one of ``paths`` by that path's name: the same experiment run from another
    # checkout or machine (another repository root) is the same run
    roots = (resolved.get("paths") or {}).items()  # type: ignore[union-attr]
    for name, root in sorted(roots, key=lambda item: -len(str(item[1]))):
        if isinstance(root, str) and root.startswith("/") and len(root) > 1:
            canonical = canonical.replace(root, f"${{paths.{name}}}")
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def run_dir_for(cfg: DictConfig, label: str, identity: str) -> Path:
    """Where a run's results live, absolute: the workers read it from their own working
    directories, and the storage check takes a path without a scheme only when absolute.

    >>> cfg = OmegaConf.create({"sweep": {"run_dir": "runs/mine"}})
    >>> run_dir_for(cfg, "adaptive", "abc") == Path.cwd() / "runs" / "mine"
    True
    """
    explicit = OmegaConf.select(cfg, "sweep.run_dir")
    if explicit:
        return Path(explicit).absolute()
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_")[:80] or "run"
    return (Path(cfg.paths.runs) / str(cfg.experiment.name) / f"{slug}-{identity}").absolute()


class OverrideError(EvalError):
    """Overrides that cannot be expanded (a sweep list without ``--multirun``, a bad variant)."""


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def merge(base: Sequence[str], extra: Sequence[str]) -> tuple[str, ...]:
    """``base`` with ``extra`` appended; an override of the same key in ``extra`` replaces it."""
    replaced = {_key(o) for o in extra}
    return tuple(o for o in base if _key(o) not in replaced) + tuple(extra)


def label_of(overrides: Sequence[str]) -> str:
    """The overrides that say what is computed; paths and resource shapes are left out."""
    kept = [
        o
        for o in overrides
        if _key(o).split(".")[0] not in _NOT_LABELS
        and _key(o) not in _SUBSET_KEYS
        and "/" not in o.split("=", 1)[-1]
    ]
    return ",".join(kept) or "default"


def report_overrides(overrides: Sequence[str]) -> tuple[str, ...]:
    """The overrides ``scale-analytics report`` needs to find the runs they made: the experiment
    and the paths.

    >>> report_overrides(["experiment=ablation", "benchmark.limit=12", "paths.runs=/data/runs"])
    ('experiment=ablation', 'paths.runs=/data/runs')
    """
    return tuple(o for o in overrides if _key(o).split(".")[0] in ("experiment", "paths"))


def sweep_combinations(overrides: Sequence[str]) -> list[tuple[str, ...]]:
    """The cartesian product of every comma/range/choice sweep among ``overrides``."""
    parsed = OverridesParser.create().parse_overrides(list(overrides))
    axes = []
    for override in parsed:
        key = override.get_key_element()
        if override.is_sweep_override():
            axes.append([f"{key}={value}" for value in override.sweep_string_iterator()])
        else:
            axes.append([override.input_line])
    return [tuple(combo) for combo in itertools.product(*axes)]


def expand(
    argv: Sequence[str], load: Callable[[Sequence[str]], DictConfig], multirun: bool = False
) -> list[Configuration]:
    """Configurations to run, in order, each composed by ``load`` (``core.config.load_config``)
    and validated once."""
    combos = sweep_combinations(argv)
    if len(combos) > 1 and not multirun:
        raise OverrideError(
            f"{' '.join(argv)} sweeps over several values: add --multirun to run them all"
        )
    # Within a multirun, a combination is named by the overrides that vary between combinations.
    varying = [i for i in range(len(combos[0])) if len({combo[i] for combo in combos}) > 1]
    configurations = []
    for combo in combos:
        combo_label = label_of([combo[i] for i in varying] if varying else combo)
        cfg = load(combo)
        variants = OmegaConf.select(cfg, "experiment.variants") or {}
        if not variants:
            configurations.append(Configuration.of(combo_label, combo, cfg))
            continue
        variants = OmegaConf.to_container(variants)
        only = OmegaConf.select(cfg, "experiment.only")
        if only:
            only = [only] if isinstance(only, str) else list(only)
            unknown = sorted(set(only) - set(variants))  # type: ignore[arg-type]
            if unknown:
                raise OverrideError(
                    f"experiment.only names {unknown}, which are not variants of the "
                    f"experiment: {sorted(variants)}"  # type: ignore[arg-type]
                )
            variants = {n: e for n, e in variants.items() if n in only}  # type: ignore[union-attr]
        for name, extra in variants.items():  # type: ignore[union-attr]
            if not isinstance(extra, list) or not all(isinstance(o, str) for o in extra):
                raise OverrideError(
                    f"experiment.variants.{name} must be a list of key=value overrides"
                )
            label = f"{name}[{combo_label}]" if varying else name
            overrides = merge(combo, extra)
            configurations.append(Configuration.of(label, overrides, load(overrides)))
    return configurations
