#!/usr/bin/env bash
# A sweep killed with SIGKILL and rerun gives the predictions of an uninterrupted run, with the
# real local model (the test suite checks the same with a fake one).
#
#   bash benchmarks/kill_and_resume.sh [extra overrides]      # default: 0.5B, single-pass, 16 questions
#
# One question at a time: with several in flight, batch composition changes greedy decoding,
# which is not what this checks. Prints the rows, unique ids and whether SQL and results match.
# Runs under the load guard (benchmarks/_load.py): the load average before and after, and exit 3
# with NOT A FIGURE when the machine was loaded; BENCH_IGNORE_LOAD=1 for a smoke run.
set -u
cd "$(dirname "$0")/.."
if [ -z "${BENCH_LOAD_GUARDED:-}" ]; then
  exec .venv/bin/python benchmarks/_load.py -- bash benchmarks/kill_and_resume.sh "$@"
fi
export HF_HUB_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 LANCEDB_LOG=error
work=$(mktemp -d)
common="scaling=single_pass benchmark=spider_dev_sub9 benchmark.limit=16 model=qwen2.5-coder-0.5b
        sweep.in_flight=1 sweep.flush_every=1 sweep.progress=false experiment.name=kill_and_resume $*"
start=$(date +%s)
.venv/bin/scale-analytics eval $common sweep.run_dir="$work/whole" > "$work/whole.log" 2>&1
echo "uninterrupted run: $(( $(date +%s) - start )) s"
setsid .venv/bin/scale-analytics eval $common sweep.run_dir="$work/killed" > "$work/killed.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  [ "$(ls "$work/killed/parts" 2>/dev/null | wc -l)" -ge 7 ] && break
  sleep 1
done
kill -9 -- -"$pid"  # the driver, its local Ray and the model server: a machine-level crash
sleep 3
echo "killed with $(ls "$work/killed/parts" | wc -l) questions on disk"
.venv/bin/scale-analytics eval $common sweep.run_dir="$work/killed" > "$work/resumed.log" 2>&1
.venv/bin/python - "$work" <<'PY'
import sys
import polars as pl
whole = pl.read_parquet(f"{sys.argv[1]}/whole/predictions.parquet").sort("task_id")
resumed = pl.read_parquet(f"{sys.argv[1]}/killed/predictions.parquet").sort("task_id")
print(f"rows {whole.height} vs {resumed.height}, unique ids after resume {resumed['task_id'].n_unique()}")
same = whole.select("task_id", "sql", "exec_hash").equals(resumed.select("task_id", "sql", "exec_hash"))
print(f"identical task ids, SQL and result hashes: {same}")
PY
echo "logs and run directories: $work"
