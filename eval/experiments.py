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
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from core.types import Frozen
from eval.errors import EvalError
from eval.loaders.common import SUBSET_FIELDS

# Overrides that change where or how a run executes, not what it computes: not part of labels.
_NOT_LABELS = ("sweep", "paths", "experiment", "hydra", "log_level")
# Which questions a run covers: not part of its name, so a run grows across invocations.
_SUBSET_KEYS = tuple(f"benchmark.{key}" for key in SUBSET_FIELDS)


class Configuration(Frozen):
    label: str  # the MLflow run name and the run directory's stem
    overrides: tuple[str, ...]


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
    """Configurations to run, in order. ``load`` composes a config (``core.config.load_config``)."""
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
            configurations.append(Configuration(label=combo_label, overrides=combo))
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
            configurations.append(Configuration(label=label, overrides=merge(combo, extra)))
    return configurations
