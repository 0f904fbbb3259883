# Sourced by the end-to-end scripts of tests/apps: `needs_mnist DATA_DIR FILE` skips (exit 77)
# without the MNIST file; `make_scratch NAME` makes $out (removed on exit) and fail(), which prints
# its message and $out/log.
needs_mnist() {
  [[ -f $1/mnist/$2 ]] || { echo "no MNIST under $1: skipped"; exit 77; }
}
make_scratch() {
  out=$(mktemp -d "${TMPDIR:-/tmp}/starcnn-$1.XXXXXX")
  trap 'rm -rf "$out"' EXIT
}
fail() { echo "FAIL: $*"; [[ -f $out/log ]] && sed 's/^/  | /' "$out/log"; exit 1; }
