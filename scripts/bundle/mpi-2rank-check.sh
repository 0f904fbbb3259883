#!/usr/bin/env bash
# Trains on MNIST (a) as one process and (b) as 2 ranks under the bundle's mpirun on this host:
# rank 0 with the GPU and 5 CPU workers, rank 1 CPU-only with 5 CPU workers, the global batch cut
# 3:1 (--rank-shares 3,1), same flags otherwise. Prints each run's final JSON line and test accuracy;
# logs and checkpoints go to OUT_DIR. Each run is bounded by TIMEOUT_S seconds (default 900).
# CPU_ONLY=1 makes rank 0 CPU-only too (for a machine without a GPU); further arguments go to
# every train (e.g. --max-steps 5). The ranks get disjoint CPUs (RANK0_CPUS, RANK1_CPUS: lists for
# STARPU_WORKERS_CPUID); RANK_NCPU sets each rank's CPU workers (default 5) and RANK_SHARES the cut
# (default 3,1). Exits 1 if a run fails, 2 on a usage error.
# Usage: DATA_DIR=... mpi-2rank-check.sh [OUT_DIR] [TRAIN_ARGS...]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -z ${DATA_DIR:-} || ! -d ${DATA_DIR:-} ]]; then
  echo "usage: DATA_DIR=folder-with-mnist $0 [OUT_DIR] [TRAIN_ARGS...] (DATA_DIR '${DATA_DIR:-}' is not a folder)" >&2
  exit 2
fi
out=${1:-mpi-2rank-check}
shift || true
mkdir -p "$out" || exit 2
# shellcheck source=/dev/null
source "$here/env.sh" || echo "mpi-2rank-check: warning: env.sh found the host incomplete (see above)" >&2
timeout_s=${TIMEOUT_S:-900}
ncpu=${RANK_NCPU:-5}
shares=${RANK_SHARES:-3,1}
ncuda=()
if [[ ${CPU_ONLY:-0} == 1 ]]; then ncuda=(STARPU_NCUDA=0); fi

# Each rank binds its workers from logical CPU 0 up: give the ranks disjoint CPUs (rank 0: 7 CPU
# workers and the CUDA worker's thread) where the host has 15, unless RANK0_CPUS / RANK1_CPUS say.
cpus0=() cpus1=()
if [[ -n ${RANK0_CPUS:-} ]]; then
  cpus0=("STARPU_WORKERS_CPUID=$RANK0_CPUS")
elif [[ $(nproc) -ge 15 ]]; then
  cpus0=("STARPU_WORKERS_CPUID=0 1 2 3 4 5 6 7")
fi
if [[ -n ${RANK1_CPUS:-} ]]; then
  cpus1=("STARPU_WORKERS_CPUID=$RANK1_CPUS")
elif [[ $(nproc) -ge 15 ]]; then
  cpus1=("STARPU_WORKERS_CPUID=8 9 10 11 12 13 14")
fi

flags=(--data mnist --data-dir "$DATA_DIR" --epochs 2 --batch 64 --seed 1 "$@")
# Shared memory between the ranks; no single-copy (CMA is often refused inside containers).
mpi=("$here/bin/mpirun" --bind-to none --oversubscribe --mca btl "self,vader" --mca btl_vader_single_copy_mechanism none)

status=0
echo "== (a) one process: train ${flags[*]} --checkpoint $out/A.st"
timeout "$timeout_s" env "${ncuda[@]}" "$here/bin/train" "${flags[@]}" --checkpoint "$out/A.st" \
  >"$out/single.log" 2>&1 || { echo "one process exited with $?" >&2; status=1; }
echo "== (b) 2 ranks ($shares, $ncpu CPU workers each): mpirun -np 1 [GPU rank] : -np 1 [CPU rank] train ... --rank-shares $shares"
timeout "$timeout_s" "${mpi[@]}" \
  -np 1 env "${ncuda[@]}" "${cpus0[@]}" STARPU_NCPU=$ncpu "$here/bin/train" "${flags[@]}" --rank-shares "$shares" --checkpoint "$out/B.st" : \
  -np 1 env "${cpus1[@]}" STARPU_NCUDA=0 STARPU_NCPU=$ncpu "$here/bin/train" "${flags[@]}" --rank-shares "$shares" --checkpoint "$out/B.st" \
  >"$out/ranks.log" 2>&1 || { echo "2 ranks exited with $?" >&2; status=1; }

for run in single ranks; do
  echo "-- $run ($out/$run.log)"
  grep '^epoch [0-9]*: ' "$out/$run.log" # one line per epoch, with the test loss and accuracy
  grep '^{' "$out/$run.log" | tail -n 1
  echo "$run $(grep '^{' "$out/$run.log" | tail -n 1 | grep -o '"test_accuracy": [^,}]*' || echo 'test_accuracy: none')"
  [[ $status == 0 ]] || tail -n 15 "$out/$run.log"
done
exit $status
