"""A sweep on a local two-node Ray cluster beside the same sweep on one node: same answers?
how long?

    python benchmarks/bench_cluster.py [--limit 16] [key=value ...]

Two nodes started with ``ray start`` as processes of their own (a head and a worker node, one
CPU each, each with its own temp dir, HOME and cache; the storage is this clone, which both
see), then ``scale-analytics eval`` with ``sweep.ray.address`` set to the head; then the same
command with no address, on the Ray ``eval`` starts for itself with two CPUs, twice. Every run
answers live (no response cache) with greedy single pass, with worker actors of 0.55 CPU so
that the cluster's two workers land one on each node; the second one-node run measures how far
two runs of one configuration on one machine agree (a model server decoding several requests
together need not give the same greedy tokens as in another batch). Prints each run's wall
time, the tasks each node answered, and how many answers agree (as compare_predictions.py: SQL,
result hash, producer, answering step).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
from compare_predictions import COMPARED, differences  # benchmarks/compare_predictions.py

from eval.sweep.store import read_predictions
from models.local.server import free_port

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
COMMON = [
    "benchmark=spider_dev_sub9",
    "model=qwen2.5-coder-0.5b",
    "scaling=single_pass",
    "model.response_cache=null",
    # Resources that place one worker on each node, wherever the model server's actor and the
    # sandbox actors (started first) land: 0.25 + 2 x 0.1 + 0.55 fit one node's CPU, 2 x 0.55 do not.
    "+model.slots.default.ray_num_cpus=0.25",
    "sweep.workers=2",
    "sweep.worker_num_cpus=0.55",
    "sweep.sandbox_actors=2",
    "sweep.sandbox_num_cpus=0.1",
    "sweep.progress=false",
]


def ray_node(base: Path, name: str, *args: str) -> subprocess.Popen:
    """``ray start --block`` in a session of its own, under ``base/name``: its temp dir, HOME and
    cache are its own, so the two nodes share nothing but the clone."""
    home = base / name
    (home / ".cache").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "SCALE_ANALYTICS_CACHE": str(home / ".cache")}
    env["PYTHONPATH"] = str(REPO)
    command = [
        str(BIN / "ray"),
        "start",
        *args,
        f"--temp-dir={home / 'ray'}",
        "--node-ip-address=127.0.0.1",
        "--object-store-memory=200000000",
        f"--dashboard-agent-listen-port={free_port()}",
        f"--metrics-export-port={free_port()}",
        "--disable-usage-stats",
        "--block",
    ]
    return subprocess.Popen(
        command, env=env, cwd=home, stdout=subprocess.DEVNULL, start_new_session=True
    )


def stop(node: subprocess.Popen, base: Path) -> None:
    """The node's process group, then any process left running under ``base`` (its workers);
    never a Ray of another cluster on the machine."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(node.pid, signum)
            node.wait(timeout=20)
            break
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if str(base).encode() in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


def wait_for_nodes(address: str, count: int, timeout_s: float = 120) -> None:
    probe = (
        "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        out = subprocess.run(
            [sys.executable, "-c", probe, address], capture_output=True, text=True, timeout=60
        )
        if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(count)]:
            return
        time.sleep(3)
    raise SystemExit(f"the cluster at {address} did not reach {count} nodes")


def timed_eval(overrides: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(BIN / "scale-analytics"), "eval", *overrides], check=True, cwd=REPO)
    return time.perf_counter() - start


def agreeing(a: pl.DataFrame, b: pl.DataFrame) -> tuple[int, int]:
    """How many questions the two runs answered identically, of those both answered."""
    both = set(a["task_id"]) & set(b["task_id"])
    return len(both) - len({task for task, *_ in differences(a, b)}), len(both)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    common = [*COMMON, f"benchmark.limit={args.limit}", *args.overrides]
    with tempfile.TemporaryDirectory(prefix="sa-bench-cluster-") as tmp:
        base = Path(tmp)
        port = free_port()
        head = ray_node(base, "head", "--head", f"--port={port}", "--num-cpus=1")
        worker = None
        try:
            wait_for_nodes(f"127.0.0.1:{port}", 1)
            worker = ray_node(base, "worker", f"--address=127.0.0.1:{port}", "--num-cpus=1")
            wait_for_nodes(f"127.0.0.1:{port}", 2)
            cluster_s = timed_eval(
                [*common, f"sweep.ray.address=127.0.0.1:{port}", f"sweep.run_dir={base}/cluster"]
            )
        finally:
            for node in (worker, head):
                if node is not None:
                    stop(node, base)
        one_s = timed_eval([*common, f"sweep.run_dir={base}/one"])  # its own Ray, 2 CPUs
        again_s = timed_eval([*common, f"sweep.run_dir={base}/again"])
        cluster, one, again = (read_predictions(base / n) for n in ("cluster", "one", "again"))
    same, both = agreeing(cluster, one)
    same_again, both_again = agreeing(one, again)
    print(f"\n{args.limit} questions, {' '.join(args.overrides) or 'no extra overrides'}")
    print(f"two nodes: {cluster_s:.1f} s wall, tasks per node:")
    for row in cluster.group_by("node_id").len().sort("node_id").iter_rows():
        print(f"  {row[0][:12]}…: {row[1]}")
    print(f"one node:  {one_s:.1f} s wall; two nodes / one node: {cluster_s / one_s:.2f}")
    print(f"one node again: {again_s:.1f} s wall")
    print(
        f"identical answers ({', '.join(COMPARED)}): two nodes vs one {same}/{both}; "
        f"one node vs one node again {same_again}/{both_again}"
    )
    ex = {name: f"{f['ex_bird'].sum()}/{f.height}" for name, f in (("two", cluster), ("one", one))}
    print(f"EX: two nodes {ex['two']}, one node {ex['one']}")
    for task, column, left, right in differences(cluster, one):
        print(f"  differs: {task} {column}: {left!r} vs {right!r}")


if __name__ == "__main__":
    main()
