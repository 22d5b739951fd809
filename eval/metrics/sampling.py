"""pass@k: the chance that at least one of k samples is correct, from n samples with c correct.

The unbiased estimator of Chen et al. (2021), ``1 - C(n-c, k) / C(n, k)``, computed as a
product so it neither overflows nor loses precision for large n:

    1 - prod_{i = n-c+1}^{n} (1 - k / i)

    >>> pass_at_k(n=8, c=1, k=1)
    0.125
    >>> pass_at_k(n=8, c=7, k=2)
    1.0
"""

from __future__ import annotations

import math


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one question with ``n`` samples of which ``c`` are correct."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:  # every k-subset contains a correct sample
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))
