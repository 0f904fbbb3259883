#!/usr/bin/env bash
# Data-parallel training under mpirun, end to end: 2 ranks with a global batch B must reach the
# same weights (within float rounding of the summation order) as one process with batch B, with
# an even cut, an uneven one (with micro-batches on each rank), and when resuming a single
# process's checkpoint; a run with half the batch must differ (the comparison can fail); and a
# rank that fails stops the other instead of leaving it waiting.
# Usage: train_mpi_test.sh TRAIN DATA_DIR MPIRUN COMPARE_PY. Exits 77 (skipped) without MNIST.
set -euo pipefail
train=$1
data_dir=$2
mpirun=$3
compare=$4
# shellcheck source=tests/apps/test_support.sh
. "$(dirname "$0")/test_support.sh"
needs_mnist "$data_dir" train-images-idx3-ubyte
make_scratch mpi-test

# One CPU worker per rank (a 2-core machine); shared memory only, no network.
export STARPU_NCPU=1 STARPU_SILENT=1
mpi=("$mpirun" --allow-run-as-root --oversubscribe --mca btl self,vader
     --mca btl_vader_single_copy_mechanism none -np 2)
common=(--data mnist --data-dir "$data_dir" --batch 32 --eval-every 0 --seed 5 --lr 0.05
        --log-every 2 --math fp32)
tolerance=2e-5

single() { "$train" "${common[@]}" "$@" >"$out/log" 2>&1 || fail "train $* exited with $?"; }
ranks() {
  timeout 300 "${mpi[@]}" "$train" "${common[@]}" "$@" >"$out/log" 2>&1 ||
    fail "mpirun -np 2 train $* exited with $?"
}
same() { python3 "$compare" "$1" "$2" $tolerance || fail "$3"; }

single --max-steps 4 --micro-batches 1 --checkpoint "$out/single.st"
ranks --max-steps 4 --micro-batches 1 --checkpoint "$out/even.st"
grep -q '"ranks": 2' "$out/log" || fail "the 2-rank run's summary does not say 2 ranks"
[[ $(grep -c '^{"event": "summary"' "$out/log") == 1 ]] || fail "not exactly one summary line (rank 0 alone prints)"
same "$out/single.st" "$out/even.st" "2 ranks (16+16) differ from one process (32)"

ranks --max-steps 4 --micro-batches 2 --rank-shares 3,1 --checkpoint "$out/uneven.st"
grep -q 'samples 0-23 of each batch of 32' "$out/log" || fail "rank 0 did not take 24 of 32 samples"
same "$out/single.st" "$out/uneven.st" "2 ranks (24+8, 2 micro-batches) differ from one process"

# Half the batch is another training: the comparison must see it.
single --max-steps 4 --micro-batches 1 --batch 16 --checkpoint "$out/half.st"
python3 "$compare" "$out/single.st" "$out/half.st" $tolerance differ ||
  fail "batch 16 gives the same weights as batch 32: the comparison cannot tell"

# A single process's checkpoint resumed on 2 ranks.
single --max-steps 2 --micro-batches 1 --init "$out/single.st" --checkpoint "$out/resumed1.st"
ranks --max-steps 2 --micro-batches 1 --init "$out/single.st" --checkpoint "$out/resumed2.st"
same "$out/resumed1.st" "$out/resumed2.st" "resumed on 2 ranks differs from resumed on one"

# Rank 1 fails (its --init does not exist) while rank 0 waits for its gradients.
status=0
timeout 120 "$mpirun" --allow-run-as-root --oversubscribe --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism none \
  -np 1 "$train" "${common[@]}" --max-steps 4 : \
  -np 1 "$train" "${common[@]}" --max-steps 4 --init "$out/missing.st" >"$out/log" 2>&1 || status=$?
[[ $status != 0 ]] || fail "a run with a failing rank exited with status 0"
[[ $status != 124 ]] || fail "a rank failed and the other was still running after 120 s"
grep -q 'rank 1 of 2: .*missing.st.*stopping every rank' "$out/log" ||
  fail "no message from the failing rank naming the problem"
echo "2 ranks: same weights as one process (even, 3:1 with micro-batches, resumed); a failing rank stops the run (status $status)"
