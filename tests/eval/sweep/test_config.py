"""Sweep resource shapes read from Hydra config."""

from core.config import load_config
from eval.sweep.config import TIMEOUT_GRACE_S, SweepSettings


def test_the_question_timeout_leaves_the_pipeline_time_to_answer_at_its_own_deadline():
    # the pipeline returns its best candidate at scaling.global_timeout_s; the sweep must not
    # cut the question off first and lose every candidate
    slow = SweepSettings.from_cfg(
        load_config(["scaling.global_timeout_s=900", "sweep.question_timeout_s=600"])
    )
    assert slow.question_timeout_s == 900 + TIMEOUT_GRACE_S
    roomy = SweepSettings.from_cfg(
        load_config(["scaling.global_timeout_s=100", "sweep.question_timeout_s=600"])
    )
    assert roomy.question_timeout_s == 600


def test_defaults_fit_a_two_core_machine():
    sweep = SweepSettings.from_cfg(load_config([]))
    assert sweep.ray.num_cpus == 2 and sweep.workers == 1
    assert sweep.worker_num_cpus + sweep.sandbox_actors * sweep.sandbox_num_cpus <= 2
