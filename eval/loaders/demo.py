"""The embedded healthcare-claims demo benchmark: built on first use, then read as BIRD.

``eval.demo.build_demo`` writes BIRD's layout (``dev.json``, ``dev_tables.json``,
``dev_databases/claims/...``) under the spec's ``data_dir``; it is a no-op when the files are
already there.
"""

from __future__ import annotations

from pathlib import Path

from eval.loaders.bird import load_bird
from eval.loaders.common import BenchmarkSpec, LoadedBenchmark


def load_demo(spec: BenchmarkSpec) -> LoadedBenchmark:
    from eval.demo import build_demo  # the generator pulls in more than loading needs

    build_demo(Path(spec.data_dir))
    return load_bird(spec)
