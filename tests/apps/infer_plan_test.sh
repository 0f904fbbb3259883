#!/usr/bin/env bash
# `infer --plan`: a checkpoint evaluated with its convolutions split (into parts on any worker, and
# into CPU parts of unequal sizes) gives the unsplit evaluation's accuracy and loss; a plan infer
# cannot run is refused with a message and exit status 2. Then image files: one MNIST digit
# written as an 8-bit gray PNG named -x.png (given after --), as RGB, as 16-bit gray and as a PGM
# classify the same; a PNG whose header claims 16384x16384 and a FIFO are refused, named.
# Usage: infer_plan_test.sh TRAIN INFER DATA_DIR. Exits 77 (skipped) without the MNIST files.
set -euo pipefail
train=$1
infer=$2
data_dir=$3
# shellcheck source=tests/apps/test_support.sh
. "$(dirname "$0")/test_support.sh"
needs_mnist "$data_dir" t10k-images-idx3-ubyte
make_scratch infer-test

# Strict FP32 on CUDA (--math fp32), so split and unsplit evaluations differ by rounding alone.
"$train" --data mnist --data-dir "$data_dir" --batch 32 --max-steps 20 --eval-every 0 --math fp32 \
  --checkpoint "$out/net.safetensors" >"$out/log" 2>&1 || fail "train exited with status $?"

evaluate() { # PLAN -> "accuracy loss" from infer's JSON line
  "$infer" --checkpoint "$out/net.safetensors" --data mnist --data-dir "$data_dir" --batch 500 \
    --math fp32 --plan "$1" >"$out/log" 2>&1 || fail "infer --plan $1 exited with status $?"
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

# The first test digit in four encodings, written with Python's zlib and struct.
(cd "$out" && python3 - "$data_dir/mnist/t10k-images-idx3-ubyte" <<'PY'
import struct, sys, zlib
with open(sys.argv[1], "rb") as f:
    f.seek(16)
    digit = f.read(28 * 28)
def png(name, color, depth, row_bytes, height=28, width=28):
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    raw = b"".join(b"\0" + row_bytes(y) for y in range(min(height, 28)))
    with open(name, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth,
                color, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
row = lambda y: digit[28 * y:28 * y + 28]
png("-x.png", 0, 8, row)
png("rgb.png", 2, 8, lambda y: bytes(v for p in row(y) for v in (p, p, p)))
png("gray16.png", 0, 16, lambda y: b"".join(struct.pack(">H", p * 257) for p in row(y)))
png("huge.png", 0, 8, row, 16384, 16384)
with open("digit.pgm", "wb") as f:
    f.write(b"P5 28 28 255\n" + digit)
PY
)
(cd "$out" && "$infer" --checkpoint net.safetensors --json --math fp32 --batch-size 4 -- -x.png rgb.png gray16.png \
  digit.pgm >log 2>&1) || fail "infer on the image files exited with status $?"
python3 -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert [r["file"] for r in rows] == ["-x.png", "rgb.png", "gray16.png", "digit.pgm"], rows
assert all(r["probabilities"] == rows[0]["probabilities"] for r in rows), rows' "$out/log" ||
  fail "the four encodings of one digit did not classify the same"
mkfifo "$out/fifo.png"
set +e
(cd "$out" && timeout 20 "$infer" --checkpoint net.safetensors huge.png fifo.png >log 2>&1)
status=$?
set -e
[[ $status -eq 1 ]] || fail "infer on a 16384x16384 PNG and a FIFO exited with status $status, not 1"
grep -q "huge.png: the image is 16384x16384, the network takes 28x28" "$out/log" ||
  fail "no message naming huge.png's size"
grep -q "fifo.png: is not a regular file" "$out/log" || fail "no message naming the FIFO"
echo "infer --plan: split evaluations match the unsplit one (accuracy $acc, loss $loss); image files classify alike"
