"""What a teacher-forced scoring call costs, against free decoding, and in turn against at once.

    python benchmarks/bench_teacher_forcing.py [--model qwen2.5-coder-1.5b] [--repeat 2] [--sqls 4]

Through the project's own client (slot router and all, as the adaptive pipeline calls it), on
Spider's concert_singer reference schema with one question, the prompt cached on a slot first:

    free greedy decode of the SQL's length ─┐
    the SQL forced by a grammar             ├─► seconds per call, forced tokens per second
    the same with logprobs (a scoring call) ┘
    N distinct SQLs scored one at a time  ║  the same N at once  ──► seconds for the N

The last pair decides ``scaling.select_parallel``: at once, calls beyond the prompt's
slot go to slots that evaluate the prompt again.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _spider import concert_singer, reference_schema_of  # benchmarks/_spider.py

from _load import parse_guarded  # benchmarks/_load.py

QUESTION = "What are the names of the singers who performed in a concert in 2014?"
SQLS = (
    "SELECT DISTINCT T1.Name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.Singer_ID = "
    "T2.Singer_ID JOIN concert AS T3 ON T2.concert_ID = T3.concert_ID WHERE T3.Year = 2014",
    "SELECT T1.Name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.Singer_ID = "
    "T2.Singer_ID JOIN concert AS T3 ON T2.concert_ID = T3.concert_ID WHERE T3.Year = '2014'",
    "SELECT Name FROM singer WHERE Singer_ID IN (SELECT Singer_ID FROM singer_in_concert WHERE "
    "concert_ID IN (SELECT concert_ID FROM concert WHERE Year = 2014))",
    "SELECT T1.Name FROM singer AS T1 JOIN concert AS T3 ON T1.Singer_ID = T3.concert_ID "
    "WHERE T3.Year = 2014",
)


async def measure(model: str, repeat: int, sqls: int = len(SQLS)) -> dict[str, list[float]]:
    from core.config import load_config
    from models import build_client
    from models.scoring import teacher_forced
    from models.types import ChatRequest
    from pipelines.agents.render import DIALECT_NAME
    from pipelines.prompts import load_prompt

    cfg = load_config([f"model={model}"])
    db, _ = concert_singer()
    schema = await reference_schema_of(db)
    messages = load_prompt("single_pass").render(
        dialect=DIALECT_NAME["sqlite"],
        schema=schema,
        cells="",
        examples="",
        question=QUESTION,
        evidence="",
    )
    forced = [f"```sql\n{sql}\n```" for sql in SQLS[:sqls]]
    out: dict[str, list[float]] = {}
    client = build_client(cfg.model)

    async def timed(name: str, *requests: ChatRequest) -> None:
        start = time.perf_counter()
        replies = await asyncio.gather(*(client.chat(r, role="generator") for r in requests))
        out.setdefault(name, []).append(time.perf_counter() - start)
        out.setdefault(f"{name} tokens", []).append(sum(r.usage.completion_tokens for r in replies))

    try:
        await client.chat(ChatRequest(messages=messages, max_tokens=1), role="generator")
        for _ in range(repeat):
            one = teacher_forced(messages, forced[0])
            tokens = (await client.chat(one, role="generator")).usage.completion_tokens
            await timed("free greedy decode", ChatRequest(messages=messages, max_tokens=tokens))
            await timed("forced by the grammar", one.model_copy(update={"logprobs": False}))
            await timed("forced, with logprobs", one)
            start = time.perf_counter()
            for text in forced:
                await client.chat(teacher_forced(messages, text), role="generator")
            out.setdefault(f"{sqls} SQLs in turn", []).append(time.perf_counter() - start)
            await timed(f"{sqls} SQLs at once", *(teacher_forced(messages, t) for t in forced))
    finally:
        await client.aclose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sqls", type=int, choices=range(2, len(SQLS) + 1), default=len(SQLS))
    args, guard = parse_guarded(parser)
    guard.before()
    figures = asyncio.run(measure(args.model, args.repeat, args.sqls))
    guard.after()
    print(f"{'call':<26} {'s (median)':>10} {'tokens':>7} {'tokens/s':>9}")
    for name, seconds in figures.items():
        if name.endswith(" tokens"):
            continue
        s = statistics.median(seconds)
        tokens = figures.get(f"{name} tokens")
        rate = f"{statistics.median(tokens) / s:9.1f}" if tokens else f"{'':>9}"
        count = f"{statistics.median(tokens):7.0f}" if tokens else f"{'':>7}"
        print(f"{name:<26} {s:10.2f} {count} {rate}")


if __name__ == "__main__":
    main()
