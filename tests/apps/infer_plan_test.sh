#!/usr/bin/env bash
# `infer --plan`: a checkpoint evaluated with its convolutions split (into parts on any worker, and
# into CPU parts of unequal sizes) gives the unsplit evaluation's accuracy and loss; a plan infer
# cannot run is refused with a message and exit status 2.
# Usage: infer_plan_test.sh TRAIN INFER DATA_DIR. Exits 77 (skipped) without the MNIST files.
set -euo pipefail
train=$1
infer=$2
data_dir=$3
# shellcheck source=tests/apps/test_support.sh
. "$(dirname "$0")/test_support.sh"
needs_mnist "$data_dir" t10k-images-idx3-ubyte
make_scratch infer-test

"$train" --data mnist --data-dir "$data_dir" --batch 32 --max-steps 20 --eval-every 0 \
  --checkpoint "$out/net.safetensors" >"$out/log" 2>&1 || fail "train exited with status $?"

evaluate() { # PLAN -> "accuracy loss" from infer's JSON line
  "$infer" --checkpoint "$out/net.safetensors" --data mnist --data-dir "$data_dir" --batch 500 \
    --plan "$1" >"$out/log" 2>&1 || fail "infer --plan $1 exited with status $?"
  python3 -c 'import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        e = json.loads(line)
        print(e["accuracy"], e["loss"], e["plan"])' "$out/log"
}
read -r acc loss plan < <(evaluate none)
[[ $plan == none ]] || fail "infer reported plan '$plan' for none"
for p in "even:2" "1@cpu,5@cpu;conv2=3@any,13@cpu"; do
  read -r acc_p loss_p plan_p < <(evaluate "$p")
  [[ $plan_p == "$p" ]] || fail "infer reported plan '$plan_p' for $p"
  python3 -c 'import sys
a, l, ap, lp = map(float, sys.argv[1:])
sys.exit(0 if abs(a - ap) <= 2e-4 and abs(l - lp) <= 1e-4 * max(1.0, abs(l)) else 1)' \
    "$acc" "$loss" "$acc_p" "$loss_p" || fail "plan $p: accuracy $acc_p loss $loss_p, unsplit $acc $loss"
done

for bad in auto "7@cpu"; do
  set +e
  "$infer" --checkpoint "$out/net.safetensors" --data mnist --data-dir "$data_dir" --plan "$bad" \
    >"$out/log" 2>&1
  status=$?
  set -e
  [[ $status -eq 2 ]] || fail "infer --plan $bad exited with status $status, not 2"
  grep -qi "plan\|filters" "$out/log" || fail "infer --plan $bad said nothing about the plan"
done
echo "infer --plan: split evaluations match the unsplit one (accuracy $acc, loss $loss)"
