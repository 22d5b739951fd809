"""Prefix-affinity routing of requests to llama.cpp server slots.

llama.cpp's server keeps one prompt's KV cache per slot and never shares it across slots, so
concurrent requests sharing a schema prompt, spread over idle slots, each recompute it. This
router pins requests that share a long prompt prefix to the slot that last served that prefix
(sent as ``id_slot``; the server queues them there), unless that slot is already
``max_queue`` deep; everything else goes to the least-busy slot.

    prompt ──► slot with the longest shared prefix (≥ min_shared_chars, queue < max_queue)
           └─► else the least-busy slot ──► ``id_slot`` in the request body

>>> router = SlotRouter(slots=4)
>>> a = router.acquire("SCHEMA" * 500 + "question 1"); b = router.acquire("SCHEMA" * 500 + "question 2")
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

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError(f"SlotRouter needs at least one slot, got {self.slots}")
        self._state = [_SlotState() for _ in range(self.slots)]

    def acquire(self, prompt: str) -> int:
        """The slot for ``prompt``; call :meth:`release` with it when the request is done."""
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

    def release(self, slot: int) -> None:
        self._state[slot].in_flight -= 1
