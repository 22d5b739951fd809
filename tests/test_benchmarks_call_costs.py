"""Where a run's model time goes (benchmarks/bench_call_costs.py), from trace events."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("bench_call_costs", _BENCH / "bench_call_costs.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def event(agent: str, seconds: float, prompt: int, cached: int, completion: int) -> dict:
    return {
        "name": agent,
        "duration_s": seconds,
        "ok": True,
        "attributes": {
            "gen_ai.operation.name": "chat",
            "gen_ai.agent.name": agent,
            "gen_ai.usage.input_tokens": prompt,
            "gen_ai.usage.cache_read.input_tokens": cached,
            "gen_ai.usage.output_tokens": completion,
        },
    }


def test_calls_are_read_from_the_events_and_the_fit_recovers_the_rates(tmp_path):
    # 10 ms per evaluated prompt token, 50 ms per completion token, 0.5 s per call
    calls = [
        ("greedy", 1000, 0, 20),
        ("samples", 1000, 1000, 80),
        ("greedy", 1500, 500, 30),
        ("samples", 1500, 1400, 120),
        ("fixer", 800, 0, 40),
    ]
    folder = tmp_path / "run" / "traces" / "abc"
    folder.mkdir(parents=True)
    lines = [
        json.dumps(event(a, 0.010 * (p - c) + 0.050 * o + 0.5, p, c, o)) for a, p, c, o in calls
    ]
    lines.append(json.dumps({"name": "sandbox", "attributes": {"gen_ai.operation.name": "x"}}))
    (folder / "events.jsonl").write_text("\n".join(lines))
    read = bench.chat_calls(tmp_path / "run")
    assert [c["agent"] for c in read] == ["greedy", "samples", "greedy", "samples", "fixer"]
    a, b, c = bench.fit(read)
    assert abs(a - 0.010) < 1e-6 and abs(b - 0.050) < 1e-6 and abs(c - 0.5) < 1e-6
