#!/usr/bin/env python3
"""--math on every program: a value other than fp32 or tf32 is refused with a message naming both
(exit 2); --help lists it; every JSON line a program prints records the math it ran with (tf32
unless told); train writes it into the checkpoint's metadata (read here from the safetensors
header itself) and infer reports it.

Usage: math_flag_test.py TRAIN INFER TRAIN_BENCHMARK SPLIT_SWEEP OP_BENCHMARK DATA_DIR.
train and infer on MNIST are skipped without its files (the rest still runs)."""
import json
import os
import struct
import subprocess
import sys
import tempfile

train, infer, train_benchmark, split_sweep, op_benchmark, data_dir = sys.argv[1:7]
programs = [train, infer, train_benchmark, split_sweep, op_benchmark]
work = tempfile.mkdtemp(prefix="starcnn-math.")
failures = []
env = dict(os.environ, STARPU_SILENT="1", STARPU_NCPU="2", STARPU_NCUDA="0")


def run(args, timeout=300):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def json_lines(text):
    lines = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
    check(lines, "no JSON line in:\n" + text)
    return lines


def expect_math(lines, math, who):
    for line in lines:
        check(line.get("math") == math, f"{who}: math {line.get('math')!r} in {line}, expected {math}")


for program in programs:
    name = os.path.basename(program)
    for bad in ("fp16", "TF32", ""):
        r = run([program, "--math", bad])
        check(r.returncode == 2, f"{name} --math {bad!r}: exit {r.returncode}, expected 2")
        check(f"--math must be fp32 or tf32, got '{bad}'" in r.stderr,
              f"{name} --math {bad!r}: stderr {r.stderr!r}")
    r = run([program, "--help"])
    check(r.returncode == 0 and "--math" in r.stdout and "fp32" in r.stdout and "tf32" in r.stdout,
          f"{name} --help does not show --math")

quick = ["--warmup", "1", "--steps", "1", "--round", "1", "--max-seconds", "0", "--seed", "3"]
for math in (None, "fp32", "tf32"):
    flag = ["--math", math] if math else []
    want = math or "tf32"
    r = run([train_benchmark, "--networks", "lenet", "--batches", "4", "--configs", "cpu-only"]
            + quick + flag)
    check(r.returncode == 0, f"train_benchmark {flag}: exit {r.returncode}\n{r.stderr}")
    expect_math(json_lines(r.stdout), want, f"train_benchmark {flag}")
r = run([split_sweep, "--network", "lenet", "--batch", "4", "--plans", "none", "--math", "fp32"]
        + quick)
check(r.returncode == 0, f"split_sweep: exit {r.returncode}\n{r.stderr}")
expect_math(json_lines(r.stdout), "fp32", "split_sweep")
r = run([op_benchmark, "--where", "cpu", "--batches", "2", "--rounds", "1", "--round-ms", "1",
         "--math", "fp32"])
check(r.returncode == 0, f"op_benchmark: exit {r.returncode}\n{r.stderr}")
expect_math(json_lines(r.stdout), "fp32", "op_benchmark")


def safetensors_metadata(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(size)).get("__metadata__", {})


if os.path.isfile(os.path.join(data_dir, "mnist", "train-images-idx3-ubyte")):
    ckpt = os.path.join(work, "net.safetensors")
    r = run([train, "--data", "mnist", "--data-dir", data_dir, "--batch", "16", "--max-steps", "2",
             "--eval-every", "0", "--math", "fp32", "--checkpoint", ckpt])
    check(r.returncode == 0, f"train: exit {r.returncode}\n{r.stderr}")
    expect_math(json_lines(r.stdout), "fp32", "train")
    check(safetensors_metadata(ckpt).get("math") == "fp32",
          f"checkpoint metadata {safetensors_metadata(ckpt)} has no math fp32")
    image = os.path.join(work, "digit.pgm")
    with open(image, "wb") as f:
        f.write(b"P5 28 28 255\n" + bytes((7 * i) % 256 for i in range(28 * 28)))
    for math in (None, "fp32"):
        flag = ["--math", math] if math else []
        r = run([infer, "--checkpoint", ckpt, "--json"] + flag + [image, image])
        check(r.returncode == 0, f"infer {flag}: exit {r.returncode}\n{r.stderr}")
        lines = json_lines(r.stdout)
        check(len(lines) == 2, f"infer {flag}: {len(lines)} lines for 2 images")
        expect_math(lines, math or "tf32", f"infer {flag}")
    r = run([infer, "--checkpoint", ckpt, image])
    check("trained with fp32 math" in r.stdout, f"infer does not report the checkpoint's math:\n{r.stdout}")
else:
    print(f"no MNIST under {data_dir}: train and infer skipped")

subprocess.run(["rm", "-rf", work])
if failures:
    sys.exit(1)
print(f"--math of {len(programs)} programs: refused values, help and the JSON lines' math")
