"""The scoring-call benchmark (benchmarks/bench_teacher_forcing.py) end to end on the real 0.5B."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import load_config
from models.registry import get_spec
from models.store import ModelStore

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_teacher_forcing.py"


@pytest.mark.real_model
def test_the_script_times_each_kind_of_call():
    cfg = load_config()
    if not ModelStore(cfg.paths.models).is_verified(get_spec("qwen2.5-coder-0.5b")):
        pytest.skip("the 0.5B model is not pulled: scale-analytics models pull qwen2.5-coder-0.5b")
    if not (Path(cfg.paths.benchmarks) / "spider" / "database" / "concert_singer").exists():
        pytest.skip("Spider's databases are not beside the repository")
    out = subprocess.run(
        [
            sys.executable,
            str(_BENCH),
            "--model",
            "qwen2.5-coder-0.5b",
            "--repeat",
            "1",
            "--sqls",
            "2",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "BENCH_IGNORE_LOAD": "1"},
        timeout=600,
    ).stdout.splitlines()
    header = next(i for i, line in enumerate(out) if line.startswith("call"))
    rows = {line[:26].strip(): line[26:].split() for line in out[header + 1 :]}
    assert list(rows) == [
        "free greedy decode",
        "forced by the grammar",
        "forced, with logprobs",
        "2 SQLs in turn",
        "2 SQLs at once",
    ]
    forced_tokens = int(rows["forced, with logprobs"][1])
    assert forced_tokens >= 30  # the whole SQL was decoded, fence included
    assert int(rows["2 SQLs at once"][1]) > 2 * forced_tokens * 0.8
    assert all(float(cells[0]) > 0 for cells in rows.values())
