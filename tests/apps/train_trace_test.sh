#!/usr/bin/env bash
# `train --trace` end to end, as a user runs it: the program links the fast StarPU (no FxT), so it
# must restart itself on the StarPU with FxT, record a few steps, and leave the files StarVZ/ViTE
# read (paje.trace, tasks.rec naming starcnn's codelets) and the report (summary.txt, and trace.png
# with its five panels where gnuplot or matplotlib is installed, as scripts/setup-deps does).
# Usage: train_trace_test.sh TRAIN DATA_DIR. Exits 77 (skipped) without the MNIST files.
set -euo pipefail
train=$1
data_dir=$2
[[ -f $data_dir/mnist/train-images-idx3-ubyte ]] || { echo "no MNIST under $data_dir: skipped"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/starcnn-trace-test.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/  | /' "$out/train.log"; exit 1; }

# A user's shell has no StarPU on LD_LIBRARY_PATH: the restart must find the FxT build itself.
env -u LD_LIBRARY_PATH STARPU_SCHED=eager STARPU_NCPU=2 STARPU_SILENT=1 "$train" \
  --data mnist --data-dir "$data_dir" --batch 16 --max-steps 3 --eval-every 0 \
  --trace "$out/trace" >"$out/train.log" 2>&1 || fail "train --trace exited with status $?"

grep -q "restarting on the StarPU with FxT" "$out/train.log" || fail "train did not restart on FxT"
for f in paje.trace tasks.rec summary.txt; do
  [[ -s $out/trace/$f ]] || fail "the trace folder has no $f"
done
grep -qE '^Name: starcnn_(conv2d|conv_block)_forward' "$out/trace/tasks.rec" ||
  fail "tasks.rec names no convolution forward task (starcnn_conv2d_forward or _conv_block_forward)"
grep -q '^{' "$out/train.log" || fail "train printed no closing JSON line"
grep -q '^critical path: [0-9.]* ms over [1-9][0-9]* tasks' "$out/trace/summary.txt" ||
  fail "summary.txt has no critical path"
if command -v gnuplot >/dev/null || python3 -c 'import matplotlib' 2>/dev/null; then
  [[ $(head -c 8 "$out/trace/trace.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "trace.png is missing or not a PNG"
  grep -qx 'trace.png panels: gantt, counts, transfers, idle, critical path' \
    "$out/trace/summary.txt" || fail "summary.txt does not list trace.png's five panels"
fi

# Without a usable FxT library the run stops before training, saying why.
if env -u LD_LIBRARY_PATH STARCNN_FXT_STARPU_LIB="$out/nowhere" "$train" --data mnist --data-dir "$data_dir" \
  --max-steps 1 --trace "$out/trace2" >"$out/train.log" 2>&1; then
  fail "train --trace ran without a StarPU with FxT"
fi
grep -q "needs StarPU built with FxT" "$out/train.log" || fail "no message naming the missing FxT"
echo "train --trace: restarted on FxT, $(grep -c '^Name:' "$out/trace/tasks.rec") task records"
