"""Prefix-affinity routing of concurrent requests to llama.cpp server slots.

llama.cpp's server keeps one prompt's KV cache per slot and never shares it across slots, so
concurrent requests sharing a schema prompt, spread over idle slots, each recompute it. While
other requests are in flight, this router pins a request that shares a long prompt prefix with
the prompt a slot last served to that slot (sent as ``id_slot``; the server queues it there),
unless that slot is already ``max_queue`` deep; otherwise it goes to the least-busy slot.

A request that arrives with nothing in flight is not pinned (``None``): the server then picks
the idle slot whose cache shares most of the prompt and, when that keeps less than half of the
slot's cache, first restores the best-matching earlier prompt from its host-memory prompt
cache (llama.cpp's ``--cache-ram``). A pinned request skips both, so pinning a request that has
nothing to queue behind only loses: on the claims questions asked one at a time, pinned
greedy calls found 7% of their prompt cached (docs/benchmarks.md#prompt-cache).

    prompt ──► nothing in flight ──► None (the server picks)
           └─► slot with the longest shared prefix (≥ min_shared_chars, queue < max_queue)
           └─► else the least-busy slot ──► ``id_slot`` in the request body

>>> router = SlotRouter(slots=4)
>>> router.acquire("SCHEMA" * 500 + "question 1") is None
True
>>> a = router.acquire("SCHEMA" * 500 + "question 2"); b = router.acquire("SCHEMA" * 500 + "question 3")
>>> a == b
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass
class _SlotState:
    last_prompt: str = ""
    in_flight: int = 0
    last_used: int = 0


@dataclass
class SlotRouter:
    slots: int
    min_shared_chars: int = 1000
    max_queue: int = 3
    _state: list[_SlotState] = field(default_factory=list)
    _clock: int = 0
    _unpinned: int = 0  # requests in flight on a slot the server chose

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError(f"SlotRouter needs at least one slot, got {self.slots}")
        self._state = [_SlotState() for _ in range(self.slots)]

    def acquire(self, prompt: str) -> int | None:
        """The slot for ``prompt``, or ``None`` for the server's own choice; call
        :meth:`release` with it when the request is done."""
        if not self._unpinned and not any(s.in_flight for s in self._state):
            self._unpinned += 1
            return None
        shared = [len(os.path.commonprefix([prompt, s.last_prompt])) for s in self._state]
        affine = [
            i
            for i, s in enumerate(self._state)
            if shared[i] >= self.min_shared_chars and s.in_flight < self.max_queue
        ]
        if affine:
            slot = max(affine, key=lambda i: (shared[i], -self._state[i].in_flight))
        else:
            slot = min(
                range(self.slots),
                key=lambda i: (self._state[i].in_flight, self._state[i].last_used),
            )
        self._clock += 1
        state = self._state[slot]
        state.last_prompt, state.in_flight, state.last_used = (
            prompt,
            state.in_flight + 1,
            self._clock,
        )
        return slot

    def release(self, slot: int | None) -> None:
        if slot is None:
            self._unpinned -= 1
        else:
            self._state[slot].in_flight -= 1
