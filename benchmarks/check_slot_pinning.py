"""Do concurrent requests to the local llama.cpp server get their own replies, with and without
pinning them to server slots (``id_slot``)?

    python benchmarks/check_slot_pinning.py [--requests 16] [--at-once 8] [--model qwen2.5-coder-0.5b]

Starts the model's server (4 slots), then sends the same requests once per mode, ``--at-once`` of
them concurrently: leaving every slot to the server (what the project's client does), pinning
request ``i`` to slot ``i % 2`` so that requests queue on busy slots, and pinning all but every
fourth request (pinned and unpinned requests together, as a client routing by shared prefix
sends them). Every request asks the model to copy a list of words tagged with the request's
number, behind a shared 1,400-character system prompt (as a schema is shared); a reply holding a
word tagged with another request's number is a reply mixed between requests. Prints, per mode,
the requests answered within ``--deadline-s``, the mixed replies and the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import time

import httpx

from core.config import load_config
from models.local.server import LocalServer, LocalServerSettings
from models.registry import get_spec
from models.store import ModelStore

WORDS = (
    "apple river stone cloud tiger violin pepper candle silver meadow rocket harbor velvet falcon "
    "copper lantern orchid glacier saddle walnut thunder marble cobalt ember prairie quartz"
).split()
SYSTEM = "You are a careful copying assistant. " * 40
TAGGED = re.compile(r"([a-z]+)(\d+)")  # a word and the number of the request it belongs to
# Where each mode sends request i: None leaves the slot to the server.
MODES = {
    "server's choice": lambda i: None,
    "pinned to i % 2": lambda i: i % 2,
    "mixed": lambda i: None if i % 4 == 0 else i % 2,  # every fourth request left to the server
}


def request_body(i: int, *, pin: int | None) -> dict:
    words = [f"{random.Random(i).choice(WORDS)}{i}" for _ in range(25)]
    context = f"Context {i % 3}: " + " ".join(f"item_{i % 3}_{k}" for k in range(150))
    return {
        "model": "local",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {
                "role": "user",
                "content": f"{context}\nCopy this list exactly, comma separated, "
                f"nothing else: {', '.join(words)}",
            },
        ],
        "temperature": 0.0,
        "max_tokens": 160,
        **({"id_slot": pin} if pin is not None else {}),
    }


def foreign_words(reply: str, i: int) -> list[str]:
    """Words tagged with another request's number."""
    tagged = (TAGGED.fullmatch(w.strip(" .,")) for w in reply.replace(",", " ").split())
    return [m[0] for m in tagged if m and m[1] in WORDS and m[2] != str(i)]


async def run(
    server: LocalServer, *, requests: int, at_once: int, mode: str, deadline_s: float
) -> dict:
    gate = asyncio.Semaphore(at_once)
    headers = {"Authorization": f"Bearer {server.api_key}"}

    async def one(client: httpx.AsyncClient, i: int) -> tuple[int, str]:
        body = request_body(i, pin=MODES[mode](i))
        async with gate:
            resp = await client.post(
                server.base_url + "/chat/completions", json=body, headers=headers
            )
        resp.raise_for_status()
        return i, resp.json()["choices"][0]["message"]["content"]

    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=None) as client:
        tasks = [asyncio.create_task(one(client, i)) for i in range(requests)]
        done, pending = await asyncio.wait(tasks, timeout=deadline_s)
        for task in pending:
            task.cancel()
    replies = [task.result() for task in done]
    mixed = {i: foreign for i, reply in replies if (foreign := foreign_words(reply, i))}
    return {"wall_s": time.perf_counter() - start, "mixed": mixed, "answered": len(replies)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--at-once", type=int, default=8)
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument(
        "--deadline-s",
        type=float,
        default=600.0,
        help="give up on a mode's unanswered requests after this long",
    )
    args = parser.parse_args()
    path = ModelStore(load_config().paths.models).path_for(get_spec(args.model))
    with LocalServer(path, LocalServerSettings(n_parallel=4, ctx_per_slot=4096)) as server:
        print(
            f"{args.model} on {server.config.runtime}, 4 slots, {args.requests} requests, "
            f"{args.at_once} at once"
        )
        for mode in args.modes:
            result = asyncio.run(
                run(
                    server,
                    requests=args.requests,
                    at_once=args.at_once,
                    mode=mode,
                    deadline_s=args.deadline_s,
                )
            )
            print(
                f"{mode:<16} answered {result['answered']}/{args.requests}, mixed "
                f"{len(result['mixed'])}, wall {result['wall_s']:.1f} s  {result['mixed']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
