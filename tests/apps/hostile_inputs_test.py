#!/usr/bin/env python3
"""train and infer on hostile inputs (issue 14's table): each gets a clear error naming the problem
(exit 1 or 2, no raw exception text) within seconds and without growing memory; a checkpoint is
never lost, never holds NaN, and leaves no temporary file; every JSON line printed is valid JSON.

Usage: hostile_inputs_test.py TRAIN INFER DATA_DIR. Exits 77 (skipped) without the MNIST files."""
import json
import math
import os
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time

train, infer, data_dir = sys.argv[1:4]
if not os.path.isfile(os.path.join(data_dir, "mnist", "t10k-images-idx3-ubyte")):
    print(f"no MNIST under {data_dir}: skipped")
    sys.exit(77)
data_dir = os.path.abspath(data_dir)
work = tempfile.mkdtemp(prefix="starcnn-hostile.")
failures = []

TINY = "input 1 32 32\nconv 2 5\nrelu\nmaxpool 2\nflatten\nlinear 10\n"
TINY_SHAPES = [("conv1.weight", [2, 1, 5, 5]), ("conv1.bias", [2]),
               ("fc1.weight", [10, 392]), ("fc1.bias", [10])]
MNIST_PRE = {"pad": 2, "mean": [0.1307], "std": [0.3081]}
MAX_SECONDS = 30
MAX_RSS_MB = 1500


def path(name):
    return os.path.join(work, name)


def write_safetensors(file, tensors, metadata):
    """tensors: [(name, shape, values)]; written as the safetensors format says."""
    header, data = {"__metadata__": metadata}, b""
    for name, shape, values in tensors:
        raw = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(file, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def checkpoint(file, network=TINY, shapes=TINY_SHAPES, pre=MNIST_PRE, fill=lambda name, i: 0.01):
    tensors = []
    for name, shape in shapes:
        n = math.prod(shape)
        tensors.append((name, shape, [fill(name, i) for i in range(n)]))
    write_safetensors(file, tensors, {"format": "starcnn-checkpoint 1", "network": network,
                                      "preprocess": json.dumps(pre), "step": "0", "epoch": "0"})
    return file


def run(name, args, status, says, env=None, preexec=None):
    """Runs one program; checks its exit status, that its output says each of `says`, its time and
    its peak memory, and that every line starting with '{' is valid JSON. Returns the output."""
    full_env = {**os.environ, "STARPU_SILENT": "1", "STARPU_NCPU": "1", **(env or {})}
    start = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
                            preexec_fn=preexec)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        failures.append(f"{name}: still running after 60 s")
        return ""
    seconds = time.monotonic() - start
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # peak of any child so far
    out, err = out.decode(errors="replace"), err.decode(errors="replace")
    text = out + err
    problems = []
    if proc.returncode not in (status if isinstance(status, tuple) else (status,)):
        problems.append(f"exit status {proc.returncode}, expected {status}")
    for part in says:
        if part not in text:
            problems.append(f"does not say {part!r}")
    for raw in ("std::", "basic_filebuf", "terminate called", "what():", "bad_alloc"):
        if raw in text:
            problems.append(f"raw exception text {raw!r}")
    if seconds > MAX_SECONDS:
        problems.append(f"took {seconds:.1f} s")
    if rss_mb > MAX_RSS_MB:
        problems.append(f"peak memory {rss_mb:.0f} MB")
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                json.loads(line)
            except ValueError as e:
                problems.append(f"invalid JSON line {line!r}: {e}")
    if problems:
        failures.append(f"{name}: " + "; ".join(problems) + "\n  | " + text.strip().replace("\n", "\n  | "))
    else:
        print(f"ok   {name} ({seconds:.1f} s, exit {proc.returncode})")
    return out


def train_args(*extra, data=None):
    return [train, "--data", "mnist", "--data-dir", data or data_dir, "--batch", "32",
            "--max-steps", "2", "--eval-every", "0", *extra]


tiny_net = path("tiny.net")
open(tiny_net, "w").write(TINY)
good = checkpoint(path("good.safetensors"))

# A data path and a network file name with a quote, a tab and a backslash: valid JSON, failing or not.
odd_dir = path('a"b\tc\\d')
os.mkdir(odd_dir)
os.symlink(os.path.join(data_dir, "mnist"), os.path.join(odd_dir, "mnist"))
odd_net = path('n"e\\t.net')
open(odd_net, "w").write(TINY)
out = run("quoted data dir and network", train_args("--network", odd_net, data=odd_dir), 0, [])
summary = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
if not summary or summary[-1].get("data_dir") != odd_dir or summary[-1].get("network") != odd_net:
    failures.append(f"quoted data dir: summary {summary} does not hold the paths as given")
run("quoted missing data dir", train_args(data='a"b'), 1, ['a"b/mnist/', "missing"])

# Files that are not regular files.
zero = path("zero.safetensors")
os.symlink("/dev/zero", zero)
fifo = path("fifo")
os.mkfifo(fifo)
folder = path("folder")
os.mkdir(folder)
for label, bad, what in (("/dev/zero symlink", zero, "character device"), ("FIFO", fifo, "FIFO"),
                         ("directory", folder, "directory")):
    run(f"{label} as infer --checkpoint", [infer, "--checkpoint", bad, "--data", "mnist",
                                           "--data-dir", data_dir], 1, [bad, what])
    run(f"{label} as train --init", train_args("--network", tiny_net, "--init", bad), 1, [bad, what])
    run(f"{label} as train --network", train_args("--network", bad), 1, [bad, what])

# A header of 400,000 keys (24 MB): refused in seconds.
many = {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(400000)}
text = json.dumps(many).encode()
with open(path("many.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
run("400,000-key header", [infer, "--checkpoint", path("many.safetensors"), "--data", "mnist",
                            "--data-dir", data_dir], 1, ["many.safetensors", "metadata has no"])

# Padding that leaves no image, before any padded data set is built.
for pad in (300, 1024):
    ckpt = checkpoint(path(f"pad{pad}.safetensors"), pre=dict(MNIST_PRE, pad=pad))
    run(f"pad {pad}", [infer, "--checkpoint", ckpt, "--data", "mnist", "--data-dir", data_dir], 1,
        [ckpt, f"pads each side by {pad}"])

# A network far larger than the machine from an 8 MB checkpoint; the image is never read.
huge = "input 1 1024 1024\nconv 1048576 1\n"
ckpt = checkpoint(path("huge.safetensors"), network=huge,
                  shapes=[("conv1.weight", [1048576, 1, 1, 1]), ("conv1.bias", [1048576])],
                  pre={"pad": 0, "mean": [0.5], "std": [0.5]})
run("huge conv network (infer)", [infer, "--checkpoint", ckpt, path("no-image.pgm")], 1,
    ["needs at least", "half of this machine's memory"])
open(path("huge-train.net"), "w").write("input 1 32 32\nconv 1048576 5 pad=2\nmaxpool 2\nflatten\nlinear 10\n")
run("huge conv network (train)", train_args("--network", path("huge-train.net")), 2,
    ["--batch", "needs at least"])

# NaN and Inf weights: refused when loaded.
for label, value in (("NaN", float("nan")), ("Inf", float("inf"))):
    ckpt = checkpoint(path(f"{label}.safetensors"), fill=lambda n, i, v=value: v if i == 3 else 0.01)
    run(f"{label} weights (infer)", [infer, "--checkpoint", ckpt, "--data", "mnist", "--data-dir",
                                     data_dir], 1, [ckpt, "conv1.weight[3] is"])
    run(f"{label} weights (train --init)", train_args("--network", tiny_net, "--init", ckpt), 1,
        [ckpt, "conv1.weight[3] is"])

# Weights near 1e36 and a huge learning rate: the first step's loss is finite (every logit is the
# same) but the update overflows; the save refuses, keeps nothing new and says why.
big = checkpoint(path("big.safetensors"), fill=lambda n, i: 1e36 if n == "conv1.bias" else 0.01)
out_ckpt = path("after-big.safetensors")
run("weights near 1e36, --lr 1e6", train_args("--network", tiny_net, "--init", big, "--lr", "1e6",
                                              "--max-steps", "1", "--checkpoint", out_ckpt), 1,
    ["no longer finite", "not saved", "keeps what it held"])
if os.path.exists(out_ckpt):
    failures.append("weights near 1e36: a checkpoint was written")

# Plans whose numbers would wrap int.
run("int-overflow plan", train_args("--network", tiny_net, "--plan",
                                    "none;conv1=2147483647@any,2147483647@any,8@any"), 2,
    ["--plan", "2147483647 is too large"])

# StarPU's environment, checked before StarPU starts.
run("STARPU_NCPU=abc", train_args("--network", tiny_net), 2, ["STARPU_NCPU", "'abc'"],
    env={"STARPU_NCPU": "abc"})
run("STARPU_NCUDA=1.5", [infer, "--checkpoint", good, "--data", "mnist", "--data-dir", data_dir], 2,
    ["STARPU_NCUDA", "'1.5'"], env={"STARPU_NCUDA": "1.5"})
run("unknown STARPU_SCHED", train_args("--network", tiny_net), 2,
    ["STARPU_SCHED 'dmdaz'", "dmdas"], env={"STARPU_SCHED": "dmdaz"})

# Networks that do not fit the data set or the trainer, reported as themselves.
open(path("five.net"), "w").write(TINY.replace("linear 10", "linear 5"))
run("linear 5 on MNIST", train_args("--network", path("five.net")), 2, ["5 outputs", "10 classes"])
open(path("pool3.net"), "w").write(TINY.replace("maxpool 2", "maxpool 3"))
out = run("maxpool 3", train_args("--network", path("pool3.net")), 2,
          ["--network", "maxpool 3"])
run("batch larger than the training set", train_args("--network", tiny_net, "--batch", "70000"), 2,
    ["--batch 70000", "larger than the training set"])
run("--epochs 0", train_args("--epochs", "0"), 2, ["--epochs"])

# An empty test set.
empty = path("empty")
os.makedirs(os.path.join(empty, "mnist"))
for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
    os.symlink(os.path.join(data_dir, "mnist", name), os.path.join(empty, "mnist", name))
with open(os.path.join(empty, "mnist", "t10k-images-idx3-ubyte"), "wb") as f:
    f.write(struct.pack(">IIII", 2051, 0, 28, 28))
with open(os.path.join(empty, "mnist", "t10k-labels-idx1-ubyte"), "wb") as f:
    f.write(struct.pack(">II", 2049, 0))
run("empty test set (infer)", [infer, "--checkpoint", good, "--data", "mnist", "--data-dir", empty],
    1, ["t10k-images-idx3-ubyte", "holds no images"])
run("empty test set (train)", train_args("--network", tiny_net, data=empty), 1, ["holds no images"])

# Checkpoint destinations that cannot be written: refused before loading anything.
open(path("plain"), "w").write("x")
for dest in ("/nonexistent/c.safetensors", path("plain") + "/c.safetensors", folder):
    run(f"checkpoint destination {dest}", train_args("--network", tiny_net, "--checkpoint", dest), 2,
        ["--checkpoint", dest])

# Leftovers of saves killed by kill -9 go at the next save; nothing else does.
ckpt = path("run.safetensors")
for name in ("run.safetensors.tmp.Ab3dE9", "run.safetensors.tmp.q1W2e3", "run.safetensors.tmp.long1234"):
    open(path(name), "wb").write(b"\0" * 100000)
run("kill -9 leftovers", train_args("--network", tiny_net, "--checkpoint", ckpt), 0, ["saved"])
left = sorted(n for n in os.listdir(work) if n.startswith("run.safetensors"))
if left != ["run.safetensors", "run.safetensors.tmp.long1234"]:
    failures.append(f"kill -9 leftovers: the folder holds {left}")

# --init from another network (same tensors, one more relu) needs the override.
open(path("relu.net"), "w").write(TINY.replace("linear 10", "relu\nlinear 10"))
run("--init from another network", train_args("--network", path("relu.net"), "--init", ckpt), 1,
    [ckpt, "layer 5 of its network"])
run("--init from another network, overridden", train_args("--network", path("relu.net"), "--init",
                                                          ckpt, "--init-any-network"), 0, ["resumed"])
run("--init with another data set's preprocessing",
    train_args("--network", tiny_net, "--init", checkpoint(path("fashion.safetensors"),
                                                           pre={"pad": 2, "mean": [0.286], "std": [0.353]})),
    1, ["trained with preprocessing"])


# A full disk (here: the file size limit) at a save: the last good checkpoint stays, training goes
# on to the end, and the exit status says the save failed.
def small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))


before = open(ckpt, "rb").read()
run("full disk at a save",
    train_args("--network", tiny_net, "--checkpoint", ckpt, "--init", ckpt, "--max-steps", "2"),
    1, ["File too large", "keeps what it held", "training goes on", "the last checkpoint save failed"], env={"STARPU_HOME": path("starpu-home")},
    preexec=small_files)
if open(ckpt, "rb").read() != before:
    failures.append("full disk: the checkpoint changed")
if [n for n in os.listdir(work) if ".tmp." in n and n != "run.safetensors.tmp.long1234"]:
    failures.append(f"full disk: temporary files left: {os.listdir(work)}")

subprocess.run(["rm", "-rf", work])
if failures:
    print("FAIL:\n" + "\n".join(failures))
    sys.exit(1)
print("every hostile input got a clear error")
