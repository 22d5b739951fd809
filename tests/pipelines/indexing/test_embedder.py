from __future__ import annotations

import os

import pytest

from pipelines.indexing.embedder import DIMENSION, THREADS_ENV, embed, embedding_threads

torch = pytest.importorskip("torch")


def test_embedding_threads_holds_its_count_for_the_block_and_restores_the_previous(
    embedder, monkeypatch
):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    before = torch.get_num_threads()
    inside = 2 if before != 2 else 1
    with embedding_threads(inside):
        assert torch.get_num_threads() == inside
        assert os.environ[THREADS_ENV] == str(inside)  # a model first loaded here takes it too
        vectors = embed(["how many [TABLE] are there ?", "list the [TABLE] of [VALUE]"])
    assert vectors.shape == (2, DIMENSION)
    assert torch.get_num_threads() == before
    assert THREADS_ENV not in os.environ


def test_embedding_threads_restores_an_environment_setting_after_an_error(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "1")
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), embedding_threads(3):
        raise RuntimeError("build failed")
    assert (torch.get_num_threads(), os.environ[THREADS_ENV]) == (before, "1")
