"""Selection by the model's own likelihood: of a split pool, the answer whose SQL the generator
finds most probable as its reply to the plain prompt.

    buckets (no clear majority) ──► distinct SQLs of the answering buckets, largest bucket first
        (≤ max_sqls) ──► teacher_forced(prompt, "```sql\\n{sql}\\n```"), ``parallel`` at a time
        ──► mean token log-probability of each SQL ──► the best SQL's candidate

A vote counts how often the sampler reached a result; the mean log-probability asks how natural
the model finds each way of writing it, which separates right from wrong buckets where the
vote and the 1.5B selector cannot (docs/benchmarks.md#selection-likelihood). One call per
SQL: the prompt is cached on the slot, each call decodes only its SQL.
On a 2-core CPU the calls go one at a time (``parallel=1``): decoding is compute-bound, and a
call that lands on another llama.cpp slot first evaluates the prompt again (4 SQLs of ~50
tokens: 18.7 s in turn, 19.9 s at once, benchmarks/bench_teacher_forcing.py); a GPU server
scores them together.

    selector = LikelihoodSelector(max_sqls=4, parallel=1)
    chosen = await selector.pick(run, buckets, prompt)  # prompt() -> the messages; None: nothing scored
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence

from models.scoring import TextScore, scored, teacher_forced
from models.types import ChatMessage, ChatResponse
from pipelines.agents.base import SQL_BLOCK_CLOSING, SQL_BLOCK_OPENING, is_fatal
from pipelines.agents.types import Bucket
from pipelines.contracts import CandidateSQL
from pipelines.prompt_fit import within_context
from pipelines.task_run import TaskRun, record_failure

Prompt = Callable[[], Sequence[ChatMessage]]  # the messages as the question's prompt stands now


class LikelihoodSelector:
    """Scores up to ``max_sqls`` distinct SQLs of the non-error buckets, one call each."""

    def __init__(self, *, max_sqls: int = 4, parallel: int = 1, max_tokens: int = 512) -> None:
        if max_sqls < 1 or parallel < 1:
            raise ValueError(
                f"LikelihoodSelector needs max_sqls >= 1 and parallel >= 1, got {max_sqls}, {parallel}"
            )
        self.max_sqls = max_sqls
        self.parallel = parallel
        self.max_tokens = max_tokens

    def candidates(self, buckets: Sequence[Bucket]) -> list[CandidateSQL]:
        """One candidate per distinct SQL: larger buckets first, within a bucket its most
        frequent SQLs first."""
        out: list[CandidateSQL] = []
        for bucket in sorted((b for b in buckets if not b.error), key=lambda b: -b.size):
            counts = Counter(m.sql.strip() for m in bucket.members)
            firsts = {m.sql.strip(): m for m in reversed(bucket.members)}
            out += [firsts[sql] for sql, _ in counts.most_common()]
        return out[: self.max_sqls]

    async def pick(
        self, run: TaskRun, buckets: Sequence[Bucket], prompt: Prompt, *, helps: bool = False
    ) -> CandidateSQL | None:
        """The candidate with the highest mean log-probability, ties to the larger bucket (its
        bucket heads the trace's ranking); None when fewer than two answers could be scored
        (the vote decides). ``prompt()`` is read at each call: a call refused for length
        narrows the question's prompt (pipelines/prompt_fit.py) for the others too; ``helps``:
        whether it shows the retrieved examples and cell values."""
        candidates = self.candidates(buckets)
        owner = {id(m): b for b in buckets for m in b.members}
        if len({owner[id(c)].hash for c in candidates}) < 2:
            return None
        gate = asyncio.Semaphore(self.parallel)
        scores = await asyncio.gather(
            *(self._score(run, prompt, c, gate, helps) for c in candidates)
        )
        ranked = [
            (score.mean, owner[id(c)].size, -i, c)
            for i, (c, score) in enumerate(zip(candidates, scores))
            if score is not None and score.tokens > 0
        ]
        if len({owner[id(c)].hash for *_, c in ranked}) < 2:
            run.recorder.decide("likelihood_unscored", "adaptive", scored=len(ranked))
            return None
        *_, best = max(ranked, key=lambda r: r[:3])
        chosen = owner[id(best)].hash
        run.recorder.ranking = (chosen,)
        run.recorder.decide(
            "likelihood",
            "adaptive",
            scored=len(ranked),
            chosen=chosen,
            means=[round(r[0], 4) for r in ranked],
        )
        return best

    async def _score(
        self,
        run: TaskRun,
        prompt: Prompt,
        candidate: CandidateSQL,
        gate: asyncio.Semaphore,
        helps: bool,
    ) -> TextScore | None:
        forced = SQL_BLOCK_OPENING + candidate.sql.strip() + SQL_BLOCK_CLOSING

        async def send(_) -> ChatResponse:
            request = teacher_forced(prompt(), forced, max_tokens=self.max_tokens)
            return await run.runtime.chat(request, role="generator", agent="likelihood")

        try:
            async with gate:
                response = await within_context(run, send, stage="adaptive", helps=helps)
            return scored(response, skip=SQL_BLOCK_OPENING)
        except Exception as exc:  # noqa: BLE001 - one unscored SQL leaves the others to compare
            if is_fatal(exc):
                raise
            record_failure(run, "likelihood", "adaptive", exc, generator=candidate.producer)
            return None
