"""Where a run's model time goes: prompt tokens evaluated, prompt tokens served from the cache,
and tokens decoded, per agent, read from the run's trace events. No model runs.

    python benchmarks/bench_call_costs.py RUN_DIR [RUN_DIR ...]

Every chat call's event carries its duration, prompt tokens, prompt tokens read from the KV
cache (``gen_ai.usage.cache_read.input_tokens``) and completion tokens. Printed per agent
(``first_wave/greedy``, ``first_wave``, ``widen/...``, ``fixer``, ``likelihood``, ...): calls,
seconds per call, prompt tokens per call and the share of them evaluated (not cached),
completion tokens per call; then one least-squares fit over all calls of the run,

    seconds ≈ a · evaluated prompt tokens + b · completion tokens + c,

whose rates say what an evaluated prompt token and a decoded token cost on the machine that
ran it, and how much of the run each accounts for. A sample request with ``n`` choices reports
the completion tokens of all choices.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

CHAT = "chat"


def chat_calls(run_dir: Path) -> list[dict]:
    """One dict per chat event of the run: agent, seconds, prompt, cached, completion."""
    calls = []
    for path in sorted(run_dir.glob("traces/*/events.jsonl")):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            attributes = event.get("attributes") or {}
            if attributes.get("gen_ai.operation.name") != CHAT or not event.get("ok", True):
                continue
            calls.append(
                {
                    "agent": attributes.get("gen_ai.agent.name") or event.get("name", "?"),
                    "seconds": float(event.get("duration_s") or 0.0),
                    "prompt": int(attributes.get("gen_ai.usage.input_tokens") or 0),
                    "cached": int(attributes.get("gen_ai.usage.cache_read.input_tokens") or 0),
                    "completion": int(attributes.get("gen_ai.usage.output_tokens") or 0),
                }
            )
    return calls


def fit(calls: list[dict]) -> tuple[float, float, float] | None:
    """(seconds per evaluated prompt token, per completion token, per call), or None."""
    if len(calls) < 4:
        return None
    x = np.array([[c["prompt"] - c["cached"], c["completion"], 1.0] for c in calls])
    y = np.array([c["seconds"] for c in calls])
    (a, b, c), *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(a), float(b), float(c)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", type=Path, nargs="+")
    args = parser.parse_args()
    for run_dir in args.run_dirs:
        calls = chat_calls(run_dir)
        print(f"\n{run_dir.name}: {len(calls)} chat calls")
        by_agent: dict[str, list[dict]] = defaultdict(list)
        for call in calls:
            by_agent[call["agent"]].append(call)
        print(
            f"{'agent':<28}{'calls':>6}{'s/call':>8}{'prompt':>8}{'evaluated':>10}"
            f"{'completion':>11}{'s total':>9}"
        )
        for agent, group in sorted(
            by_agent.items(), key=lambda kv: -sum(c["seconds"] for c in kv[1])
        ):
            n = len(group)
            prompt = sum(c["prompt"] for c in group)
            evaluated = prompt - sum(c["cached"] for c in group)
            print(
                f"{agent:<28}{n:>6}{sum(c['seconds'] for c in group) / n:>8.1f}{prompt / n:>8.0f}"
                f"{evaluated / max(prompt, 1):>10.0%}{sum(c['completion'] for c in group) / n:>11.0f}"
                f"{sum(c['seconds'] for c in group):>9.0f}"
            )
        rates = fit(calls)
        if rates is None:
            continue
        a, b, c = rates
        total = sum(x["seconds"] for x in calls)
        evaluated = sum(x["prompt"] - x["cached"] for x in calls)
        completion = sum(x["completion"] for x in calls)
        print(
            f"fit: {a * 1000:.1f} ms per evaluated prompt token ({1 / a if a > 0 else float('inf'):.0f}/s), "
            f"{b * 1000:.1f} ms per completion token, {c:.2f} s per call; of {total:.0f} s: "
            f"prompt {a * evaluated / total:.0%}, completion {b * completion / total:.0%}, "
            f"per-call {c * len(calls) / total:.0%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
