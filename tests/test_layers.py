"""The packages import one way: core ◄ models ◄ pipelines ◄ eval ◄ serve.

A layer may import the layers left of it and never one right of it, so the model layer can be
used without the pipelines, the pipelines without the benchmarks, and ``core`` without anything.
Every import counts, including those inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("core", "models", "pipelines", "eval", "serve")
ALLOWED = {layer: set(LAYERS[:i]) for i, layer in enumerate(LAYERS)}


def imported_layers(source: str) -> set[str]:
    """The project packages ``source`` imports anywhere in it (relative imports stay in their own
    package, so they never cross a layer)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        found |= {m.split(".")[0] for m in modules} & set(LAYERS)
    return found


def violations(layer: str, source: str) -> set[str]:
    """The layers ``source``, a module of ``layer``, imports but may not."""
    return imported_layers(source) - ALLOWED[layer] - {layer}


def test_the_allowed_directions():
    assert ALLOWED["core"] == set()
    assert ALLOWED["models"] == {"core"}
    assert ALLOWED["pipelines"] == {"core", "models"}
    assert ALLOWED["eval"] == {"core", "models", "pipelines"}
    assert ALLOWED["serve"] == {"core", "models", "pipelines", "eval"}


@pytest.mark.parametrize(
    ("layer", "source", "expected"),
    [
        ("models", "from pipelines.contracts import Frozen\n", {"pipelines"}),
        ("models", "import eval.loaders as loaders\n", {"eval"}),
        ("pipelines", "def main():\n    from eval.loaders import load_benchmark\n", {"eval"}),
        (
            "pipelines",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import serve\n",
            {"serve"},
        ),
        ("core", "import json, models.types\n", {"models"}),
        ("eval", "from serve.app import build\n", {"serve"}),
        ("models", "from core.types import Frozen\nfrom models.errors import ModelError\n", set()),
        ("pipelines", "from . import contracts\nfrom .schema import view\n", set()),
        (
            "eval",
            "import evaluate\nfrom pipelines_extra import x\nfrom models import build_client\n",
            set(),
        ),
    ],
)
def test_the_check_finds_a_wrong_import(layer, source, expected):
    assert violations(layer, source) == expected


@pytest.mark.parametrize("layer", LAYERS)
def test_every_module_imports_only_lower_layers(layer):
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"no modules under {layer}/"
    wrong = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in files
        if (found := violations(layer, path.read_text(encoding="utf-8")))
    }
    assert not wrong, (
        f"{layer} may import only {sorted(ALLOWED[layer]) or 'nothing of the project'}: {wrong}"
    )
