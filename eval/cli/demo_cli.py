"""``scale-analytics demo [key=value ...]``: the main job on the embedded demo benchmark.

    scale-analytics demo                       # = scale-analytics eval experiment=demo
    scale-analytics demo benchmark.limit=10    # a shorter run

Builds the demo database on first use, answers its questions with the local 1.5B model under
the CPU scaling profile (``conf/experiment/demo.yaml``), and ends with the EX table and where
the MLflow run and the report are. Rerunning resumes. With a time budget (``sweep.budget_s``,
``sweep.min_questions``, ``benchmark.order=mixed``: docs/sweeps.md) it answers as many
questions as this machine's pace fits and says so. On a CPU where llama.cpp's server built
for it pays (AVX-512) and none is built, it first says so in one line (``make install-native``).
"""

from __future__ import annotations

import sys

from omegaconf import DictConfig

from core.config import load_config
from eval.cli import run_cli
from eval.experiments import merge
from models.local import native


def native_hint(model: DictConfig) -> str | None:
    """``make install-native``'s one line, where a slot would use that build and it pays here."""
    auto = any(
        slot.get("backend") == "local"
        and slot.get("runtime", "auto") == "auto"
        and slot.get("server_binary") is None
        for slot in model.slots.values()
    )
    runtimes = model.get("runtimes_dir")
    return native.suggestion(runtimes) if auto and runtimes else None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    overrides = list(merge(["experiment=demo"], argv))
    hint = native_hint(load_config(overrides).model)
    if hint is not None:
        print(hint)
    code = run_cli.main(overrides, prog="scale-analytics demo")
    if code == 0:
        uri = load_config(overrides).experiment.tracking_uri
        print(f"Browse the runs: mlflow ui --backend-store-uri {uri}")
    return code
