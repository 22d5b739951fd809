import pytest

from core.config import load_config
from eval.experiments import OverrideError, expand, flatten, label_of, merge, sweep_combinations


def test_multirun_is_the_cartesian_product_of_comma_lists():
    combos = sweep_combinations(["scaling=default,single_pass", "benchmark.limit=3", "model=a,b"])
    assert combos == [
        ("scaling=default", "benchmark.limit=3", "model=a"),
        ("scaling=default", "benchmark.limit=3", "model=b"),
        ("scaling=single_pass", "benchmark.limit=3", "model=a"),
        ("scaling=single_pass", "benchmark.limit=3", "model=b"),
    ]


def test_a_sweep_without_multirun_is_refused():
    with pytest.raises(OverrideError, match="--multirun"):
        expand(["scaling=default,single_pass"], load_config)


def test_variant_overrides_replace_the_same_key_and_labels_skip_resources():
    assert merge(["scaling=default", "benchmark.limit=5"], ["scaling=single_pass"]) == (
        "benchmark.limit=5",
        "scaling=single_pass",
    )
    overrides = ["scaling=single_pass", "sweep.workers=4", "+paths.runs=/x", "model=m"]
    assert label_of(overrides) == "scaling=single_pass,model=m"
    # the subset is not part of a run's name: a run grows from benchmark.limit=12 to the whole subset
    assert label_of(["benchmark.limit=12", "benchmark.stride=3", "model=m"]) == "model=m"


def test_the_ablation_experiment_expands_to_one_configuration_per_variant():
    configurations = expand(["experiment=ablation", "benchmark.limit=12"], load_config)
    labels = [c.label for c in configurations]
    assert labels == [
        "full",
        "no_tournament",
        "no_refinement",
        "single_pass",
        "self_consistency",
        "no_reasoning",
        "no_icl",
        "router",
    ]
    composed = {c.label: load_config(c.overrides) for c in configurations}
    assert all(
        cfg.benchmark.name == "spider_dev_sub9" and cfg.benchmark.limit == 12
        for cfg in composed.values()
    )
    assert composed["no_icl"].scaling.k == {
        "reasoning": 2,
        "icl/direct": 0,
        "icl/cot": 0,
        "icl/decompose": 0,
    }
    assert composed["no_reasoning"].scaling.k.reasoning == 0
    assert composed["full"].scaling.k["icl/cot"] > 0
    assert composed["no_tournament"].scaling.tournament_enabled is False
    assert composed["no_refinement"].scaling.refinement_max_passes == 0
    assert composed["full"].scaling.strategy == "full_width"
    assert composed["single_pass"].scaling.strategy == "single_pass"
    assert (
        composed["self_consistency"].scaling.strategy == "single_pass"
        and composed["self_consistency"].scaling.samples == 8
    )
    # every variant shares the experiment's response cache, and it is not part of what a run is
    assert len({cfg.model.response_cache for cfg in composed.values()}) == 1
    assert (
        composed["router"].scaling.router_enabled is True
        and composed["full"].scaling.router_enabled is False
    )


def test_multirun_over_an_experiment_labels_each_variant_by_its_combination():
    overrides = ["experiment=ablation", "model=qwen2.5-coder-0.5b,qwen2.5-coder-1.5b"]
    configurations = expand(overrides, load_config, multirun=True)
    assert len(configurations) == 16
    assert configurations[0].label == "full[model=qwen2.5-coder-0.5b]"


def test_multirun_labels_name_only_what_varies_and_skip_paths():
    configurations = expand(
        ["benchmark.data_dir=/tmp/x", "benchmark.limit=3", "scaling=single_pass,default"],
        load_config,
        multirun=True,
    )
    assert [c.label for c in configurations] == ["scaling=single_pass", "scaling=default"]
    (single,) = expand(["benchmark.data_dir=/tmp/x", "scaling=single_pass"], load_config)
    assert single.label == "scaling=single_pass"


def test_the_adaptive_experiment_composes_its_baselines_and_ablations():
    configurations = expand(["experiment=adaptive"], load_config)
    composed = {c.label: load_config(c.overrides) for c in configurations}
    assert list(composed)[0] == "adaptive"  # the row that fills the shared response cache
    default = composed["adaptive"].scaling
    assert default.strategy == "adaptive"
    assert default.tournament is False and default.revise is False and default.early_stop is True
    assert composed["with_tournament"].scaling.tournament is True
    assert composed["no_early_stop"].scaling.early_stop is False
    assert composed["no_fixer"].scaling.fix_max == 0
    assert composed["single_pass"].scaling.strategy == "single_pass"
    votes = {
        label: composed[label].scaling.samples
        for label in ("self_consistency", "self_consistency_8")
    }
    assert votes == {"self_consistency": 12, "self_consistency_8": 8}
    assert len({cfg.model.response_cache for cfg in composed.values()}) == 1


def test_experiment_only_runs_the_variants_it_names_in_the_experiments_order():
    configurations = expand(["experiment=ablation", "experiment.only=[router,full]"], load_config)
    assert [c.label for c in configurations] == ["full", "router"]
    (one,) = expand(["experiment=ablation", "experiment.only=no_icl"], load_config)
    assert one.label == "no_icl"


def test_experiment_only_refuses_a_name_that_is_no_variant():
    with pytest.raises(OverrideError, match=r"\['fulll'\].*not variants"):
        expand(["experiment=ablation", "experiment.only=[fulll]"], load_config)


def test_flatten_nests_with_dots():
    flat = flatten({"a": {"b": 1, "c": {"d": [1, 2]}}, "e": None})
    assert flat == {"a.b": "1", "a.c.d": "[1, 2]", "e": "None"}


def test_a_relative_run_dir_is_made_absolute_against_the_working_directory(tmp_path, monkeypatch):
    from eval.experiments import run_dir_for

    monkeypatch.chdir(tmp_path)
    explicit = load_config(["sweep.run_dir=runs/mine"])
    assert run_dir_for(explicit, "adaptive", "abc") == tmp_path / "runs" / "mine"
    derived = load_config(["paths.runs=rel_runs"])
    assert run_dir_for(derived, "single pass", "abc") == (
        tmp_path / "rel_runs" / str(derived.experiment.name) / "single_pass-abc"
    )
