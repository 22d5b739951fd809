"""``section``: the one way a config section becomes its model."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf
from pydantic import BaseModel, ValidationError

from core.config import section
from eval.sweep.config import SweepConfig


class _Sub(BaseModel):
    n: int = 1


def test_section_reads_a_dotted_path_of_a_config_or_a_mapping():
    cfg = OmegaConf.create({"a": {"b": {"n": 5}}})
    assert section(cfg, "a.b", _Sub) == _Sub(n=5)
    assert section({"a": {"b": {"n": 6}}}, "a.b", _Sub) == _Sub(n=6)
    assert section({"n": 7}, "", _Sub) == _Sub(n=7)
    assert section(cfg, "a.missing", _Sub) == _Sub()
    assert section(None, "a", _Sub) == _Sub()


def test_section_rejects_a_key_the_model_lacks():
    with pytest.raises(ValidationError):
        section({"sweep": {"wrokers": 2}}, "sweep", SweepConfig)
