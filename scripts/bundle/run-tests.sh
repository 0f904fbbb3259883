#!/usr/bin/env bash
# Runs every test binary of the bundle (tests.txt) with its environment (env.sh). Each binary writes
# LOGDIR/NAME.log and LOGDIR/NAME.xml (GoogleTest's report); one summary line per binary goes to
# stdout. Arguments after LOGDIR go to every binary (e.g. --gtest_filter=*Relu*).
# Exits 1 if a binary fails, 2 if the environment is incomplete.
# Usage: run-tests.sh LOGDIR [GTEST_ARGS...]
set -uo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 LOGDIR [GTEST_ARGS...]" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
logdir=$1
shift
mkdir -p "$logdir" || exit 2
logdir=$(cd "$logdir" && pwd)

# shellcheck source=/dev/null
if ! source "$here/env.sh"; then
  echo "run-tests: the host lacks libraries the binaries need (see above)" >&2
  exit 2
fi
# As ctest runs them (tests/CMakeLists.txt); no FxT trace of every test's StarPU start-up.
export STARPU_SILENT=1 OPENBLAS_NUM_THREADS=1 STARPU_FXT_TRACE=${STARPU_FXT_TRACE:-0}
# The test binaries run on the libstarpu with FxT (assertions on, and the trace test needs FxT).
if [[ -d $here/lib/fxt ]]; then export LD_LIBRARY_PATH=$here/lib/fxt${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi

# The test binary runs under its own `timeout`, in a process group of its own: a limit around this
# script (gpu-session's) stops the script, and the trap stops the running binary with it.
child=
trap '[[ -n $child ]] && kill "$child" 2>/dev/null; exit 143' TERM INT

failed=()
mapfile -t tests <"$here/tests.txt"
for t in "${tests[@]}"; do
  start=$SECONDS
  # A hung binary must not take the others' time: TEST_TIMEOUT_S seconds each (default 300).
  timeout -k 5 "${TEST_TIMEOUT_S:-300}" "$here/bin/$t" --gtest_output="xml:$logdir/$t.xml" "$@" >"$logdir/$t.log" 2>&1 &
  child=$!
  wait "$child"
  rc=$?
  child=
  [[ $rc -eq 124 || $rc -eq 137 ]] && echo "(killed after ${TEST_TIMEOUT_S:-300}s)" >>"$logdir/$t.log"
  passed=$(grep -o '^\[  PASSED  \] [0-9]*' "$logdir/$t.log" | grep -o '[0-9]*$')
  skipped=$(grep -o '^\[  SKIPPED \] [0-9]* test' "$logdir/$t.log" | grep -o '[0-9]*')
  nfailed=$(grep -o '^\[  FAILED  \] [0-9]* test' "$logdir/$t.log" | grep -o '[0-9]*')
  result=ok
  if [[ $rc -ne 0 ]]; then
    result="FAILED (exit $rc)"
    failed+=("$t")
  fi
  printf '%-28s %s: %s passed, %s skipped, %s failed, %ss; log %s\n' "$t" "$result" "${passed:-0}" \
    "${skipped:-0}" "${nfailed:-0}" $((SECONDS - start)) "$logdir/$t.log"
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run-tests: ${#failed[@]} of ${#tests[@]} test binaries failed: ${failed[*]}"
  for t in "${failed[@]}"; do
    echo "--- last lines of $t.log"
    tail -n 20 "$logdir/$t.log"
  done
  exit 1
fi
echo "run-tests: all ${#tests[@]} test binaries passed"
