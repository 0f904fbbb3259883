#!/usr/bin/env bash
# train --resume and --output-dir end to end, on a small MNIST subset (640 training images, 20
# steps an epoch; 300 test images): a run of 3 epochs into --output-dir leaves epoch-001..003,
# last and best, which infer loads, best being byte for byte the epoch of best test accuracy the
# run printed (lowest training loss with --eval-every 0); --resume from epoch 2 with --epochs 3
# trains epoch 3 alone and reaches the uninterrupted run's weights (the cosine schedule goes on
# along the same curve), as --init with --epochs 1 does; --resume from the last epoch trains
# nothing; a run that peaks early keeps that epoch as best; --resume with --init and an output
# folder that cannot be made are usage errors.
# Usage: train_resume_test.sh TRAIN INFER DATA_DIR COMPARE_PY. Exits 77 (skipped) without MNIST.
set -euo pipefail
train=$1 infer=$2 data_dir=$3 compare=$4
# shellcheck source=tests/apps/test_support.sh
. "$(dirname "$0")/test_support.sh"
needs_mnist "$data_dir" train-images-idx3-ubyte
needs_mnist "$data_dir" t10k-images-idx3-ubyte
make_scratch resume-test

# The first images of each MNIST file, as IDX files of their own.
mkdir -p "$out/data/mnist"
python3 - "$data_dir/mnist" "$out/data/mnist" <<'PY'
import struct, sys
source, target = sys.argv[1:3]
for subset, count in (("train", 640), ("t10k", 300)):
    with open(f"{source}/{subset}-images-idx3-ubyte", "rb") as f:
        magic, _, rows, cols = struct.unpack(">IIII", f.read(16))
        pixels = f.read(count * rows * cols)
    with open(f"{target}/{subset}-images-idx3-ubyte", "wb") as f:
        f.write(struct.pack(">IIII", magic, count, rows, cols) + pixels)
    with open(f"{source}/{subset}-labels-idx1-ubyte", "rb") as f:
        magic, _ = struct.unpack(">II", f.read(8))
        labels = f.read(count)
    with open(f"{target}/{subset}-labels-idx1-ubyte", "wb") as f:
        f.write(struct.pack(">II", magic, count) + labels)
PY

# CPU workers alone: the same kernels in every run, so resumed and uninterrupted runs agree.
export STARPU_NCPU=2 STARPU_NCUDA=0 STARPU_SILENT=1
common=(--data mnist --data-dir "$out/data" --batch 32 --micro-batches 1 --seed 3 --lr 0.05
        --lr-schedule cosine --log-every 1000)
steps_per_epoch=20
tolerance=1e-5

run() { "$train" "${common[@]}" "$@" >"$out/log" 2>&1 || fail "train $* exited with status $?"; }
refused() { # STATUS TEXT ARGS...: train ARGS must exit with STATUS, saying TEXT
  local status=0 want=$1 says=$2
  shift 2
  "$train" "${common[@]}" "$@" >"$out/log" 2>&1 || status=$?
  [[ $status == "$want" ]] || fail "train $* exited with status $status, not $want"
  grep -q -- "$says" "$out/log" || fail "train $* did not say '$says'"
}
summary() { # FIELD: from the closing JSON line
  python3 -c 'import json, sys
print([json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1][sys.argv[2]])' \
    "$out/log" "$1"
}
epochs_trained() { sed -n 's/^epoch \([0-9]*\): .*/\1/p' "$out/log" | tr '\n' ' '; }
# The epoch printed with the highest test accuracy (the first of equals), or without evaluation
# the lowest training loss.
best_epoch() {
  python3 -c 'import re, sys
line = re.compile(r"epoch (\d+): train loss ([\d.]+) acc [\d.]+%, (?:test loss [\d.]+ acc ([\d.]+)%)?")
rows = [r for r in map(line.match, open(sys.argv[1])) if r]
scores = [(float(r[3]) if r[3] else -float(r[2]), -int(r[1])) for r in rows]
print(-max(scores)[1])' "$out/log"
}
file_of() { printf '%s/epoch-%03d.safetensors' "$1" "$2"; }
same() { python3 "$compare" "$1" "$2" $tolerance >/dev/null || fail "$3"; }
differ() { python3 "$compare" "$1" "$2" $tolerance differ >/dev/null || fail "$3"; }

# Three epochs into a folder that does not exist yet.
full=$out/runs/full
run --epochs 3 --output-dir "$full"
[[ $(epochs_trained) == "1 2 3 " ]] || fail "a run of 3 epochs printed epochs $(epochs_trained)"
for f in epoch-001 epoch-002 epoch-003 last best; do
  [[ -s $full/$f.safetensors ]] || fail "--output-dir holds no $f.safetensors"
done
[[ $(ls "$full" | wc -l) == 5 ]] || fail "--output-dir holds more than its 5 files: $(ls "$full")"
cmp -s "$full/last.safetensors" "$full/epoch-003.safetensors" || fail "last is not epoch 3"
differ "$full/epoch-001.safetensors" "$full/epoch-002.safetensors" "epochs 1 and 2 saved the same weights"
differ "$full/epoch-002.safetensors" "$full/epoch-003.safetensors" "epochs 2 and 3 saved the same weights"
best=$(best_epoch) || fail "no epoch lines"
best_full=$best
cmp -s "$full/best.safetensors" "$(file_of "$full" "$best")" ||
  fail "best.safetensors is not epoch $best, the one of best test accuracy"
# infer loads them and finds the test accuracy the run printed.
for e in 1 "$best"; do
  printed=$(sed -n "s/^epoch $e: .* test loss [0-9.]* acc \([0-9.]*\)%.*/\1/p" "$out/log")
  "$infer" --checkpoint "$(file_of "$full" "$e")" --data mnist --data-dir "$out/data" \
    >"$out/infer.log" 2>&1 || fail "infer could not evaluate epoch-00$e.safetensors"
  python3 -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
sys.exit(0 if abs(100 * e["accuracy"] - float(sys.argv[2])) < 0.01 else 1)' "$out/infer.log" "$printed" ||
    fail "infer on epoch $e does not find the test accuracy $printed% train printed"
done

# --resume: --epochs is the total; the cosine curve goes on to the uninterrupted run's weights.
resumed=$out/runs/resumed
run --resume "$full/epoch-002.safetensors" --epochs 3 --output-dir "$resumed"
[[ $(epochs_trained) == "3 " ]] || fail "--resume after epoch 2 with --epochs 3 trained epochs $(epochs_trained)"
[[ $(summary epochs) == 3 && $(summary steps) == $((3 * steps_per_epoch)) ]] ||
  fail "--resume: the summary says $(summary epochs) epochs, $(summary steps) steps"
[[ $(ls "$resumed") == "$(printf 'best.safetensors\nepoch-003.safetensors\nlast.safetensors')" ]] ||
  fail "the resumed run's folder holds $(ls "$resumed")"
differ "$full/epoch-002.safetensors" "$resumed/epoch-003.safetensors" "--resume did not train"
same "$full/epoch-003.safetensors" "$resumed/epoch-003.safetensors" \
  "--resume from epoch 2 does not reach the uninterrupted run's epoch 3"
# --init keeps its meaning: --epochs more.
run --init "$full/epoch-002.safetensors" --epochs 1 --checkpoint "$out/init.safetensors"
[[ $(epochs_trained) == "3 " ]] || fail "--init after epoch 2 with --epochs 1 trained epochs $(epochs_trained)"
same "$full/epoch-003.safetensors" "$out/init.safetensors" \
  "--init from epoch 2 with --epochs 1 does not reach the uninterrupted run's epoch 3"

# Nothing left to train: exit 0, no epoch, nothing written.
for total in 3 2; do
  run --resume "$full/last.safetensors" --epochs $total --output-dir "$out/runs/none"
  grep -q "nothing left to train" "$out/log" || fail "--resume at epoch 3, --epochs $total: no message"
  [[ -z $(epochs_trained) ]] || fail "--resume at epoch 3, --epochs $total trained epochs $(epochs_trained)"
  [[ -z $(ls "$out/runs/none") ]] || fail "--resume with nothing to train wrote $(ls "$out/runs/none")"
done

# A learning rate too high for momentum 0.9: accuracy and loss peak at an early epoch, then the
# run diverges, so best must not be last. Without evaluation best goes by the training loss.
for eval_every in 1 0; do
  run --epochs 5 --lr 0.1 --lr-schedule constant --eval-every $eval_every --output-dir "$out/runs/high$eval_every"
  best=$(best_epoch) || fail "no epoch lines"
  [[ $best != 5 ]] || fail "--lr 0.1 did not peak before its last epoch (the test needs it to)"
  cmp -s "$out/runs/high$eval_every/best.safetensors" "$(file_of "$out/runs/high$eval_every" "$best")" ||
    fail "with --eval-every $eval_every, best.safetensors is not epoch $best, the best one printed"
done

refused 2 "cannot go together" --resume "$full/last.safetensors" --init "$full/last.safetensors"
touch "$out/plain"
refused 2 "--output-dir: cannot create $out/plain/sub" --output-dir "$out/plain/sub"
refused 2 "--output-dir: cannot use $out/plain" --output-dir "$out/plain"
echo "--output-dir: epochs 1-3, last, best (epoch $best_full of test accuracy); --resume and --init reach the uninterrupted run"
