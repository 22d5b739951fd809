"""Every default lives on its model: each composed config section validates as its model, the
profiles named ``default`` are the models' defaults, and no YAML file restates a value it
inherits, so YAML and models cannot drift apart."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from omegaconf import OmegaConf
from pydantic import BaseModel, Field, ValidationError

from core.config import BASES, CONF_DIR, REGISTERED_BASES, load_config, model_defaults, section
from eval.experiments import expand
from eval.loaders.common import BenchmarkSpec
from eval.settings import EvalSettings
from eval.sweep.config import SweepSettings
from models.budget import PriceList
from models.config import ModelSettings
from pipelines.settings import PipelineSettings
from pipelines.strategies.adaptive_settings import AdaptiveScaling
from pipelines.strategies.full_width_settings import FullWidthScaling
from pipelines.strategies.registry import scaling_settings, settings_models

# The model of each top-level section; the rest (paths, experiment, seed, log_level) have none;
# ``scaling`` is the settings of the strategy it names (scaling_settings).
SECTIONS: dict[str, type[BaseModel]] = {
    "pipeline": PipelineSettings,
    "sweep": SweepSettings,
    "benchmark": BenchmarkSpec,
    "model": ModelSettings,
    "prices": PriceList,
    "eval": EvalSettings,
}
GROUPS = sorted({node.split("/")[0] for node in BASES} | set(REGISTERED_BASES))


def validate_sections(cfg) -> None:
    for path, model in SECTIONS.items():
        section(cfg, path, model)  # a key the model lacks, or a bad value, raises
    scaling_settings(cfg)


def _options(group: str) -> list[str]:
    return sorted(path.stem for path in (CONF_DIR / group).glob("*.yaml"))


def _profiles() -> list[list[str]]:
    every_option = [[f"{group}={name}"] for group in GROUPS for name in _options(group)]
    combined = [["scaling=cpu_small", "pipeline=cpu_small"], ["sweep=cluster"]]
    experiments = [[f"experiment={name}"] for name in _options("experiment")]
    return [[], *every_option, *combined, *experiments]


@pytest.mark.parametrize("overrides", _profiles(), ids=lambda o: " ".join(o) or "root")
def test_every_section_of_every_profile_validates(overrides):
    validate_sections(load_config(overrides))


@pytest.mark.parametrize("experiment", ["adaptive", "demo", "ablation", "claims", "enterprise"])
def test_every_experiment_variant_composes_without_plus(experiment):
    for configuration in expand([f"experiment={experiment}"], load_config):
        validate_sections(load_config(configuration.overrides))


def test_the_default_profiles_are_the_models_defaults():
    assert scaling_settings(load_config(["scaling=default"])) == FullWidthScaling()
    assert scaling_settings(load_config(["scaling=adaptive"])) == AdaptiveScaling(
        global_timeout_s=300, token_budget=60000
    )
    assert section(load_config(["sweep=default"]), "sweep", SweepSettings) == SweepSettings()
    pipeline = section(load_config(["pipeline=default"]), "pipeline", PipelineSettings)
    # paths: the only values YAML must give
    located = {"trace": {"directory"}, "cheatsheet": {"root"}, "index": True}
    assert pipeline.model_dump(exclude=located) == PipelineSettings().model_dump(exclude=located)


def test_a_field_no_yaml_names_is_overridden_without_plus():
    cfg = load_config(
        [
            "scaling=default",
            "pipeline.sandbox.memory_mb=2048",
            "sweep.worker_num_gpus=0.5",
            "scaling.k_resynth=3",
        ]
    )
    assert (cfg.pipeline.sandbox.memory_mb, cfg.sweep.worker_num_gpus, cfg.scaling.k_resynth) == (
        2048,
        0.5,
        3,
    )


def _model(node: str) -> type[BaseModel] | None:
    """The model whose defaults a ConfigStore node holds; None for a YAML option."""
    group, name = node.split("/")
    if node in BASES:
        module, cls = BASES[node].split(":")
        return getattr(importlib.import_module(module), cls)
    if group == "scaling" and name.startswith("base_"):
        return settings_models().get(name.removeprefix("base_"))
    return None


def _composed(group: str, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what a group option's defaults list gives it, what its own file states), unresolved."""
    if (model := _model(f"{group}/{name}")) is not None:
        return model_defaults(model), {}
    own = OmegaConf.to_container(OmegaConf.load(CONF_DIR / group / f"{name}.yaml"))
    inherited = OmegaConf.create({})
    for entry in own.pop("defaults", []):
        if entry != "_self_":
            parent, _, package = entry.partition("@")
            values = OmegaConf.merge(*_composed(group, parent))
            inherited = OmegaConf.merge(inherited, {package: values} if package else values)
    return OmegaConf.to_container(inherited), own


def _restated(inherited: dict[str, Any], own: dict[str, Any], prefix: str = "") -> list[str]:
    found = []
    for key, value in own.items():
        if key not in inherited:
            continue
        if isinstance(value, dict) and isinstance(inherited[key], dict):
            found += _restated(inherited[key], value, f"{prefix}{key}.")
        elif value == inherited[key]:
            found.append(f"{prefix}{key}: {value!r}")
    return found


@pytest.mark.parametrize(
    ("group", "name"), [(group, name) for group in GROUPS for name in _options(group)]
)
def test_yaml_states_only_what_differs(group, name):
    restated = _restated(*_composed(group, name))
    assert not restated, f"conf/{group}/{name}.yaml restates inherited values: {restated}"


class _Sub(BaseModel):
    n: int = 1


class _Example(BaseModel):
    name: str
    timeout_s: float = Field(default=30, gt=0)
    ratio: float = 0.5
    steps: tuple[_Sub, ...] = (_Sub(n=2),)
    sub: _Sub = _Sub()
    optional: _Sub | None = None
    note: str | None = None


def test_model_defaults_are_plain_values_as_written():
    # Required fields are the YAML's; an optional sub-model defaulting to None is left out.
    assert model_defaults(_Example) == {
        "timeout_s": 30,
        "ratio": 0.5,
        "steps": [{"n": 2}],
        "sub": {"n": 1},
        "note": None,
    }
    assert (
        type(model_defaults(_Example)["timeout_s"]) is int
    )  # the hashed config keeps 30, not 30.0


def test_section_reads_a_dotted_path_of_a_config_or_a_mapping():
    cfg = OmegaConf.create({"a": {"b": {"n": 5}}})
    assert section(cfg, "a.b", _Sub) == _Sub(n=5)
    assert section({"a": {"b": {"n": 6}}}, "a.b", _Sub) == _Sub(n=6)
    assert section({"n": 7}, "", _Sub) == _Sub(n=7)
    assert section(cfg, "a.missing", _Sub) == _Sub()
    assert section(None, "a", _Sub) == _Sub()


def test_section_rejects_a_key_the_model_lacks():
    with pytest.raises(ValidationError):
        section({"sweep": {"wrokers": 2}}, "sweep", SweepSettings)


def test_an_experiment_sets_the_groups_composed_before_it():
    cfg = load_config(["experiment=enterprise"])
    assert cfg.eval.judge == "default"
    assert cfg.benchmark.name == "enterprise_demo" and cfg.benchmark.stride == 2


def test_the_claims_halves_answer_every_question_the_demo_a_budgeted_share():
    demo = load_config(["experiment=demo"])
    assert demo.sweep.budget_s == 480 and demo.benchmark.order == "mixed"
    for offset in (0, 1):
        claims = load_config(["experiment=claims", f"benchmark.offset={offset}"])
        assert claims.sweep.budget_s is None and claims.benchmark.order == "given"
        assert (claims.benchmark.stride, claims.benchmark.offset) == (2, offset)


def test_a_storage_uri_gets_a_working_copy_under_the_cache_and_an_unknown_scheme_one_line():
    from core.config import UnsupportedStorage

    cfg = load_config(["paths.storage=s3://bucket/sa", "paths.cache=/data/cache"])
    assert cfg.paths.working == "/data/cache/storage/s3/bucket/sa"
    assert cfg.paths.indexes == "/data/cache/storage/s3/bucket/sa/.cache/indexes"
    assert cfg.paths.runs == "/data/cache/storage/s3/bucket/sa/runs"
    with pytest.raises(UnsupportedStorage) as caught:
        load_config(["paths.storage=s4://bucket/sa"])
    assert str(caught.value) == (
        "paths.storage=s4://bucket/sa: pyarrow.fs has no filesystem for s4://; use a directory "
        "or a URI it resolves, such as s3://bucket/prefix (docs/sweeps.md, Storage)"
    )
    mounted = load_config(["paths.storage=/mnt/shared/sa"]).paths
    assert mounted.working == "/mnt/shared/sa"
    assert mounted.indexes == "/mnt/shared/sa/.cache/indexes"
