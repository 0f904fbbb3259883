#!/usr/bin/env bash
# What FxT costs when no trace is recorded: times train_benchmark on the fast StarPU it links and
# on the StarPU with FxT (same ABI, swapped in with LD_LIBRARY_PATH, STARPU_FXT_TRACE=0), rounds
# interleaved so that both see the same machine. One JSON line per measurement on stdout (the
# benchmark's own, with "starpu" added), a table of medians and their ratio on stderr.
# Usage: perf/tracing_overhead.sh [BUILD_DIR] [ROUNDS] [-- TRAIN_BENCHMARK_ARGS...]
# Default arguments: lenet, batches 4 and 64, cpu-only.
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
shift $(($# > 2 ? 2 : $#))
[[ ${1:-} == -- ]] && shift
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(--networks lenet --batches 4,64 --configs cpu-only --warmup 20
  --steps 100 --round 10 --max-seconds 4)
bench=$build/perf/train_benchmark
fxt_prefix=$(cat "$build/starpu-fxt-prefix" 2>/dev/null) ||
  { echo "tracing_overhead: no $build/starpu-fxt-prefix (run make build)" >&2; exit 2; }
[[ -x $bench ]] || { echo "tracing_overhead: $bench is missing (run make build)" >&2; exit 2; }

echo "# tracing_overhead: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}" >&2
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for starpu in fast fxt; do
    lib=()
    [[ $starpu == fxt ]] && lib=(LD_LIBRARY_PATH="$fxt_prefix/lib")
    env "${lib[@]}" STARPU_FXT_TRACE=0 "$bench" "${args[@]}" 2>/dev/null |
      sed -n "s/^{/{\"starpu\": \"$starpu\", /p" | tee -a "$results"
  done
done
python3 - "$results" >&2 <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("step_ms") is None:
        continue
    key = (r.get("network"), r.get("batch"), r.get("config"))
    rows.setdefault(key, {}).setdefault(r["starpu"], []).append(r["step_ms"])
print(f"{'network':8} {'batch':>5} {'config':9} {'fast ms':>9} {'fxt ms':>9} {'fxt/fast':>8}")
for (net, batch, config), by in sorted(rows.items()):
    fast, fxt = statistics.median(by.get("fast", [float("nan")])), statistics.median(by.get("fxt", [float("nan")]))
    print(f"{net:8} {batch:>5} {config:9} {fast:9.3f} {fxt:9.3f} {fxt / fast:8.2f}")
PY
