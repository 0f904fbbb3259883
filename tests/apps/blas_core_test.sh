#!/usr/bin/env bash
# The OpenBLAS core fix end to end: with a stand-in for OpenBLAS's self-description LD_PRELOADed
# (FAKE: it says "Prescott" unless OPENBLAS_CORETYPE names a core), each program restarts itself
# once with OPENBLAS_CORETYPE set for this CPU, says so in one line on stderr, and its --version
# then names that core. The expected core comes from /proc/cpuinfo's flags (SkylakeX with AVX-512
# F/BW/DQ/VL, Haswell with AVX2 and FMA, none otherwise). The user's OPENBLAS_CORETYPE and
# STARCNN_NO_BLAS_CORE_FIX=1 leave OpenBLAS alone; an OpenBLAS that ignores the setting is not
# restarted twice; the arguments survive the restart.
# Usage: blas_core_test.sh FAKE_LIB PROGRAM...
set -euo pipefail
# Under the AddressSanitizer build the preloaded stand-in would come before ASan's runtime, which
# ASan refuses by default; the order does not matter to what this test checks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
fake=$1
shift
# shellcheck source=tests/apps/test_support.sh
. "$(dirname "$0")/test_support.sh"
make_scratch blas-core

flags=" $(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo | head -n1) "
has() { [[ $flags == *" $1 "* ]]; }
want=
if has avx512f && has avx512bw && has avx512dq && has avx512vl; then
  want=SkylakeX
elif has avx2 && has fma; then
  want=Haswell
fi

# PROGRAM ARGS...: runs it with the stand-in and a clean OpenBLAS environment plus $extra;
# stdout to $out/stdout, stderr to $out/log; sets $status and $core (from --version's output).
run() {
  status=0
  env -u OPENBLAS_CORETYPE -u STARCNN_NO_BLAS_CORE_FIX -u STARCNN_BLAS_CORE_RESTARTED_FROM \
    LD_PRELOAD="$fake" "${extra[@]}" timeout 60 "$@" >"$out/stdout" 2>"$out/log" || status=$?
  core=$(sed -n 's/^openblas: \([^ ]*\) core;.*/\1/p' "$out/stdout")
}
restarts() { grep -c "restarted with OPENBLAS_CORETYPE" "$out/log" || true; }

for program in "$@"; do
  name=$(basename "$program")
  extra=()
  run "$program" --version
  [[ $status == 0 ]] || fail "$name --version exited with $status"
  if [[ -n $want ]]; then
    [[ $core == "$want" ]] || fail "$name: OpenBLAS core '$core' after the fix, expected $want"
    [[ $(restarts) == 1 ]] || fail "$name: expected one restart line on stderr"
    grep -q "^$name: OpenBLAS chose its Prescott kernels on this .* CPU: restarted with OPENBLAS_CORETYPE=$want, now $want " \
      "$out/log" || fail "$name: the restart line does not name Prescott and $want"
  else
    [[ $core == Prescott && $(restarts) == 0 ]] || fail "$name: restarted on a CPU without AVX2"
  fi

  extra=(OPENBLAS_CORETYPE=Sandybridge)
  run "$program" --version
  [[ $core == Sandybridge && $(restarts) == 0 ]] ||
    fail "$name: the user's OPENBLAS_CORETYPE=Sandybridge gave core '$core'"
  extra=(STARCNN_NO_BLAS_CORE_FIX=1)
  run "$program" --version
  [[ $core == Prescott && $(restarts) == 0 ]] ||
    fail "$name: STARCNN_NO_BLAS_CORE_FIX=1 gave core '$core'"

  [[ -n $want ]] || continue
  # An OpenBLAS that keeps its core whatever OPENBLAS_CORETYPE says: one restart, no loop.
  extra=(FAKE_OPENBLAS_IGNORES_CORETYPE=1)
  run "$program" --version
  [[ $status == 0 && $core == Prescott && $(restarts) == 1 ]] ||
    fail "$name: with an OpenBLAS ignoring the setting: status $status, core '$core'"
  grep -q "yet it still uses Prescott" "$out/log" || fail "$name: no word that the core stayed"
  # The restarted program got the same arguments: a bad one is still refused, once.
  extra=()
  run "$program" --no-such-option
  [[ $status == 2 && $(restarts) == 1 && $(grep -c "no-such-option" "$out/log") -ge 1 ]] ||
    fail "$name --no-such-option after the restart: status $status"
done
echo "OpenBLAS core fix of $# programs: ${want:-no restart (no AVX2)} for Prescott"
