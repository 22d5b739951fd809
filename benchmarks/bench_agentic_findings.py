"""What the agentic mode's checks found and what became of it, read from a run's traces. No model runs.

    python benchmarks/bench_agentic_findings.py RUN_DIR [RUN_DIR ...] [--stride 2]

A run of ``scaling=agentic`` records every routing as a trace decision
(``pipelines/strategies/agentic.py``): ``agentic.rewrite`` (a rewriter changed the SQL, no
retry), ``agentic.repair_in_place`` / ``agentic.expand_schema`` (a finding sent back, with its
class and source), ``agentic.accept`` and the fallbacks. Per run and half (the task id's index
modulo ``--stride``, as ``bench_halves.py``):

- **how questions ended**: accepted at the first attempt, accepted after repairs, or answered by
  the fallback, each with its EX;
- **findings by class and where they were caught**: before execution (a checker-chain stage:
  the error never reached the database), by the engine, on the result (empty, NULL-only, the
  count shape), by the plan verifier or the semantic validator; the catch rate is the share
  caught before execution; a finding is *cleared* when the question's next attempt does not
  meet its class again (a finding on the last attempt has no next one);
- **rewrites by rewriter**: how often each changed an SQL, on how many questions.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl
from bench_halves import halves

from eval.sweep.store import read_predictions

ROUTES = ("agentic.repair_in_place", "agentic.expand_schema", "agentic.stop")
ENGINES = {"sqlite", "duckdb"}
# Where a finding came from, by its source (pipelines/agentic_mode: classify.py, verifier.py,
# validator.py); every other source is a checker-chain stage (or "parse", the chain's parser).
WHERE = {"result": "result", "result_shape": "result", "plan_verifier": "verifier"}


def where(source: str) -> str:
    if source in ENGINES:
        return "engine"
    if source in WHERE:
        return WHERE[source]
    if "validator" in source:
        return "validator"
    return "before execution"


def attempt_number(stage: str) -> int | None:
    found = re.fullmatch(r"attempt_(\d+)", stage)
    return int(found.group(1)) if found else None


def read_traces(run: Path) -> dict[str, list[dict]]:
    """task_id -> its decisions, in order."""
    decisions: dict[str, list[dict]] = {}
    for path in sorted(run.glob("traces/**/traces.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                trace = json.loads(line)
                decisions[trace["task_id"]] = trace.get("decisions", [])
    return decisions


def ending(decisions: list[dict]) -> str:
    accepted = next((d for d in decisions if d["label"] == "agentic.accept"), None)
    if accepted is not None:
        first = accepted["stage"] == "attempt_1"
        return "accepted, first attempt" if first else "accepted after repairs"
    if any(d["label"].startswith("agentic.fallback") for d in decisions):
        return "fallback"
    return "no answer"


def summarise(frame: pl.DataFrame, traces: dict[str, list[dict]]) -> list[str]:
    right = dict(zip(frame["task_id"], frame["ex_bird"].fill_null(False), strict=True))
    endings: dict[str, list[bool]] = defaultdict(list)
    found: Counter[tuple[str, str]] = Counter()
    cleared: Counter[tuple[str, str]] = Counter()
    last: Counter[tuple[str, str]] = Counter()
    rewrites: Counter[str] = Counter()
    rewritten_questions: dict[str, set[str]] = defaultdict(set)
    for task_id, ok in right.items():
        decisions = traces.get(task_id, [])
        endings[ending(decisions)].append(bool(ok))
        classes_at: dict[int, set[str]] = defaultdict(set)
        attempts: set[int] = set()
        routed: list[tuple[int, tuple[str, str]]] = []  # (attempt, (class, where caught))
        for d in decisions:
            number = attempt_number(d["stage"])
            if number is not None:
                attempts.add(number)
            if d["label"] == "agentic.rewrite":
                rewriter = str(d["features"].get("rewriter", "?"))
                rewrites[rewriter] += 1
                rewritten_questions[rewriter].add(task_id)
            elif d["label"] in ROUTES and number is not None:
                error_class = str(d["features"].get("error_class", "?"))
                classes_at[number].add(error_class)
                routed.append((number, (error_class, where(str(d["features"].get("source", ""))))))
        for number, key in routed:
            found[key] += 1
            if number + 1 not in attempts:
                last[key] += 1
            elif key[0] not in classes_at[number + 1]:
                cleared[key] += 1
    lines = ["    how questions ended (EX right / questions):"]
    for name in ("accepted, first attempt", "accepted after repairs", "fallback", "no answer"):
        if endings.get(name):
            lines.append(f"      {name}: {sum(endings[name])}/{len(endings[name])}")
    if found:
        before = sum(n for (_, w), n in found.items() if w == "before execution")
        engine = sum(n for (_, w), n in found.items() if w == "engine")
        catch = before / (before + engine) if before + engine else float("nan")
        lines.append(
            f"    findings: {sum(found.values())}; errors caught before execution {before}, by the "
            f"engine {engine} (catch rate {catch:.2f})"
        )
        lines.append("      class | caught | found | cleared next attempt | on the last attempt")
        for (cls, at), n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"      {cls} | {at} | {n} | {cleared[(cls, at)]} | {last[(cls, at)]}")
    if rewrites:
        lines.append(
            "    rewrites: "
            + ", ".join(
                f"{r} {n} ({len(rewritten_questions[r])} questions)"
                for r, n in rewrites.most_common()
            )
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--stride", type=int, default=2)
    args = parser.parse_args()
    for run in args.runs:
        frame = read_predictions(run)
        traces = read_traces(run)
        print(run.name)
        for half, part in halves(frame, args.stride).items():
            print(f"  {half}: {part.height} questions")
            print("\n".join(summarise(part, traces)))


if __name__ == "__main__":
    main()
