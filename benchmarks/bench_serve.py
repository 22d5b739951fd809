"""The online endpoint under load, on loopback only: latency, errors and throughput.

    python benchmarks/bench_serve.py [--clients 32] [--requests 8] [--max-seconds 300]
                                     [--real] [--ignore-load] [--max-load 1.5]

Replay (always): ``scale-analytics serve`` with the replay backend (the single-pass cassette of
``tests/pipelines``, no model) on a free 127.0.0.1 port, started twice — query cache off, then
on — and ``--clients`` concurrent clients each sending ``--requests`` POST /v1/query for the
cassette's question (bounded by ``--max-seconds`` per pass). Prints per pass: requests, errors
(must be 0), p50 / p95 latency and requests per second.

``--real``: the local 1.5B (``model=qwen2.5-coder-1.5b``, pulled first) answers one question on
the demo-style concerts database: cold (first request after start), warm (the same question,
cache bypassed by another ``max_rows``: the model's prompt cache is warm) and cached.

The load average is judged before and after (``benchmarks/_load.py``); the servers and Ray are
descendants of this process, so their load is not counted as other processes'.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from _load import parse_guarded  # benchmarks/_load.py
from serve.process import ServeNotReady, ServeProcess, free_port

REPO = Path(__file__).resolve().parents[1]
CASSETTE = REPO / "tests" / "cassettes" / "pipelines" / "test_single_pass_replayed.jsonl"
QUESTION = "How many singers are from France?"
CONCERTS_SQL = """
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
        CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, singer_id INTEGER
                              REFERENCES singer(singer_id), year INTEGER);
        INSERT INTO singer VALUES (1,'Joe','France',52),(2,'Ann','France',29),(3,'Li','China',41),
                                  (4,'Bo','USA',33),(5,'Eve','USA',25);
        INSERT INTO concert VALUES (1,1,2014),(2,1,2015),(3,3,2015),(4,4,2014);
        """
ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def _env() -> dict[str, str]:
    """This environment less any API key: the servers run open, on loopback."""
    env = {k: v for k, v in os.environ.items() if k != "SCALE_ANALYTICS_API_KEY"}
    return {**env, **ENV}


class Server(ServeProcess):
    """``scale-analytics serve`` on ``db`` as "concerts", open and with its limits lifted."""

    def __init__(self, workdir: Path, db: Path, *overrides: str) -> None:
        port = free_port()
        super().__init__(
            [
                f"serve.state_dir={workdir}/state-{port}",
                f"serve.databases.concerts={db}",
                "serve.limits.rate_per_minute=100000",
                "serve.limits.concurrency=1000",
                "serve.pipeline.max_ongoing_requests=256",
                "serve.ingress.max_ongoing_requests=256",
                f"pipeline.index.root={workdir}/no-index",
                "pipeline.index.auto_build=false",
                *overrides,
            ],
            log=workdir / f"server-{port}.log",
            env=_env(),
            cwd=REPO,
            port=port,
        )

    def wait_ready(self, timeout_s: float = 600) -> None:
        try:
            super().wait_ready(timeout_s)
        except ServeNotReady as exc:
            raise SystemExit(str(exc)) from None


async def load(base: str, clients: int, requests: int, max_seconds: float) -> dict:
    latencies: list[float] = []
    errors = 0
    body = {"question": QUESTION, "database": "concerts"}
    stop_at = time.monotonic() + max_seconds

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal errors
        for _ in range(requests):
            if time.monotonic() > stop_at:
                return
            started = time.perf_counter()
            try:
                response = await http.post(f"{base}/v1/query", json=body)
                ok = response.status_code == 200
            except httpx.HTTPError:
                ok = False
            latencies.append(time.perf_counter() - started)
            errors += not ok

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(timeout=max_seconds, limits=limits) as http:
        await http.post(f"{base}/v1/query", json=body)  # warm-up (fills the cache when it is on)
        started = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "requests": len(latencies),
        "errors": errors,
        "p50_ms": 1000 * statistics.median(ordered),
        "p95_ms": 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "rps": len(latencies) / elapsed,
    }


def timed(base: str, **extra) -> tuple[float, dict]:
    started = time.perf_counter()
    response = httpx.post(
        f"{base}/v1/query",
        json={"question": QUESTION, "database": "concerts", **extra},
        timeout=900,
    )
    return time.perf_counter() - started, response.json()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=8, help="per client")
    parser.add_argument("--max-seconds", type=float, default=300, help="per pass")
    parser.add_argument("--real", action="store_true", help="also the local 1.5B: cold/warm/cached")
    args, guard = parse_guarded(parser)
    guard.before()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        db = workdir / "concerts.sqlite"
        conn = sqlite3.connect(db)
        conn.executescript(CONCERTS_SQL)
        conn.commit()
        conn.close()
        replay = (
            "model=replay",
            f"model.slots.default.cassette={CASSETTE}",
            "model.slots.default.record=false",
            "serve.default_profile=fast",
        )
        for cache in ("false", "true"):
            server = Server(workdir, db, *replay, f"serve.cache.enabled={cache}")
            try:
                server.wait_ready()
                figures = asyncio.run(
                    load(server.base, args.clients, args.requests, args.max_seconds)
                )
            finally:
                server.stop()
            rows.append((f"replay, cache {'on' if cache == 'true' else 'off'}", figures))
        real = None
        if args.real:
            subprocess.run(
                [sys.executable, "-m", "core.cli", "models", "pull", "qwen2.5-coder-1.5b"],
                cwd=REPO,
                check=True,
            )
            server = Server(
                workdir, db, "model=qwen2.5-coder-1.5b", "serve.default_profile=balanced"
            )
            try:
                server.wait_ready()
                cold, answer = timed(server.base)
                warm, _ = timed(server.base, max_rows=99)
                cached, again = timed(server.base)
                real = (cold, warm, cached, answer, again)
            finally:
                server.stop()
    guard.after()
    print(f"{args.clients} clients x {args.requests} requests, loopback")
    print(f"{'pass':<22} {'requests':>8} {'errors':>6} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>7}")
    for label, f in rows:
        print(
            f"{label:<22} {f['requests']:>8} {f['errors']:>6} {f['p50_ms']:>8.1f} "
            f"{f['p95_ms']:>8.1f} {f['rps']:>7.1f}"
        )
    if real is not None:
        cold, warm, cached, answer, again = real
        print(f"1.5B balanced: cold {cold:.2f} s, warm {warm:.2f} s, cached {cached:.3f} s")
        print(f"  sql: {answer.get('sql')!r}  cached flag on the third: {again.get('cached')}")
    return 1 if any(f["errors"] for _, f in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
