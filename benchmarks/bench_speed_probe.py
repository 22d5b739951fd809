"""This machine's speed for the local model: the probe every timing in docs/benchmarks.md cites.

    python benchmarks/bench_speed_probe.py [model=qwen2.5-coder-1.5b ...] [--repeat 3]

Starts the configured local model (``models.build_client``, the runtime the project would use
here), then sends ``--repeat`` times a fixed ~1,400-token prompt — the claims database's
reference schema for two of its tables and a question — each with a different first line, so
the server evaluates the whole prompt every time, and one token of reply. Prints the prompt
tokens, seconds and prompt tokens/s of each (minimum, median, maximum) and the slot's runtime
setting, under the load guard (``_load.py``: above load 1.5 before or from other processes
during the probe it prints NOT A FIGURE). About a minute for the 1.5B on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _load import LoadGuard, add_load_arguments  # benchmarks/_load.py
from core.config import load_config
from eval.demo.generator import build_demo
from models import build_client
from models.types import ChatMessage, ChatRequest
from pipelines.agents.runtime import as_executor
from pipelines.sandbox import Sandbox
from pipelines.schema.reference import reference_schema

TABLES = ("claims", "members")
QUESTION = "How many claims of members living in Ohio were denied in 2024?"


async def _schema() -> str:
    db = build_demo(Path(tempfile.gettempdir()) / "speed_probe_claims").database_ref()
    with Sandbox() as sandbox:
        reference = await reference_schema(as_executor(sandbox), db, sample_rows=1)
    return reference.text(TABLES)


async def _probe(overrides: list[str], repeat: int) -> tuple[str, list[tuple[int, float]]]:
    cfg = load_config(overrides)
    schema = await _schema()
    client = build_client(cfg.model)
    runs = []
    try:
        for i in range(repeat + 1):  # the first request also waits for the server: not counted
            request = ChatRequest(
                messages=(
                    ChatMessage(role="system", content=f"Probe {i} at {time.time()}.\n{schema}"),
                    ChatMessage(role="user", content=QUESTION),
                ),
                max_tokens=1,
            )
            started = time.perf_counter()
            response = await client.chat(request, role="generator")
            seconds = time.perf_counter() - started
            if i:
                runs.append((response.usage.prompt_tokens, seconds))
    finally:
        client.close()
    runtime = cfg.model.slots.default.get("runtime", "")
    return f"{cfg.model.name}, runtime {runtime}", runs


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    add_load_arguments(parser)
    args, overrides = parser.parse_known_args(argv)
    guard = LoadGuard.from_args(args)
    guard.before()
    runtime, runs = asyncio.run(_probe(overrides, args.repeat))
    guard.after()
    rates = sorted(tokens / seconds for tokens, seconds in runs)
    for tokens, seconds in runs:
        print(f"prompt {tokens} tokens in {seconds:.2f} s: {tokens / seconds:.1f} tokens/s")
    print(
        f"prompt tokens/s min {rates[0]:.1f} median {statistics.median(rates):.1f} "
        f"max {rates[-1]:.1f} ({runtime}; {os.cpu_count()} CPUs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
