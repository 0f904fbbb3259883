#!/usr/bin/env bash
# `--version` of every program, against sources that do not go through starcnn's code: the git
# commit of the source tree, the StarPU version pkg-config gives, which libstarpu is loaded (the
# fast one by default, the FxT one when LD_LIBRARY_PATH puts it first), OpenBLAS's own report of
# its core (OPENBLAS_VERBOSE=2), and the CUDA toolkit CMake found.
# Usage: version_test.sh SOURCE_DIR PROJECT_VERSION STARPU_VERSION FXT_LIB_DIR CUDA_VERSION PROGRAM...
# (FXT_LIB_DIR and CUDA_VERSION may be empty: no StarPU with FxT, no CUDA.)
set -euo pipefail
source_dir=$1 project_version=$2 starpu_version=$3 fxt_lib=$4 cuda_version=$5
shift 5
fail() { echo "FAIL: $*"; exit 1; }

commit=unknown
if git -C "$source_dir" rev-parse HEAD >/dev/null 2>&1; then
  commit=$(git -C "$source_dir" rev-parse --short=12 HEAD)
fi
field() { sed -n "s/^$1: //p" <<<"$2"; }

for program in "$@"; do
  name=$(basename "$program")
  out=$(env -u LD_LIBRARY_PATH "$program" --version) || fail "$name --version exited with $?"
  first=$(head -n1 <<<"$out")
  [[ $first == "$name (starcnn) $project_version" ]] || fail "$name: first line '$first'"
  c=$(field commit "$out")
  [[ $c == "$commit" || $c == "$commit-dirty" ]] || fail "$name: commit '$c', git says $commit"
  s=$(field starpu "$out")
  [[ $s == "$starpu_version fast "* ]] || fail "$name: starpu '$s', expected $starpu_version fast"
  # The last core OpenBLAS names: where it fell back to a weak one, the program restarted with
  # OPENBLAS_CORETYPE set (apps/cli/blas_core.h) and the second OpenBLAS is the one reporting.
  core=$(OPENBLAS_VERBOSE=2 env -u LD_LIBRARY_PATH "$program" --version 2>&1 >/dev/null |
    sed -n 's/^Core: //p' | tail -n1)
  o=$(field openblas "$out")
  [[ -n $core && $o == "$core core; OpenBLAS "* ]] || fail "$name: openblas '$o', OpenBLAS says core '$core'"
  cr=$(field 'cuda runtime' "$out")
  cd=$(field cudnn "$out")
  if [[ -n $cuda_version ]]; then
    # The runtime loaded may be newer than the toolkit built against, never of another major.
    [[ ${cr%%.*} == "${cuda_version%%.*}" ]] || fail "$name: cuda runtime '$cr', toolkit $cuda_version"
    [[ $cd =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "$name: cudnn '$cd'"
  else
    [[ $cr == none* && $cd == none* ]] || fail "$name: CUDA fields '$cr' '$cd' in a build without CUDA"
  fi
  if [[ -n $fxt_lib ]]; then
    s=$(LD_LIBRARY_PATH=$fxt_lib "$program" --version | sed -n 's/^starpu: //p')
    [[ $s == "$starpu_version fxt "* ]] || fail "$name: starpu '$s' on $fxt_lib, expected fxt"
  fi
done
echo "--version of $# programs: commit $commit, StarPU $starpu_version, OpenBLAS $core, CUDA ${cuda_version:-none}"
