#!/usr/bin/env python3
"""PyTorch training-step timings of starcnn's networks, one JSON line per measurement.

The same networks (lenet and wide on 3x32x32 inputs, model/nn/networks/*.net), batches and step as
perf/train_benchmark: fp32, cross-entropy, SGD with momentum 0.9; one step = copy the batch in +
zero_grad + forward + backward + step. Configurations:
    torch-cpu          eager on the CPU, torch.get_num_threads() threads (--threads to set)
    torch-cuda         eager on the GPU
    torch-cuda-graph   the whole step captured once as a CUDA graph and replayed
                       (static input, label and gradient tensors, as in PyTorch's whole-network
                       capture recipe); only the batch copy runs outside the graph
Steps run in rounds of --round steps with one synchronisation at the end of each round (as
train_benchmark does); step_ms is the median over rounds of round time / steps.
    python3 perf/torch/torch_train.py --networks lenet wide --batches 64 256 > torch_train.jsonl
"""
import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from torch_nets import NETWORKS

CONFIGS = ("torch-cpu", "torch-cuda", "torch-cuda-graph")




def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def machine():
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "gpu": gpu, "loadavg": load_average()}


def openblas_env():
    return {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                           "OPENBLAS_NUM_THREADS")}


def random_batches(count, batch, device, seed):
    """`count` CIFAR-like batches in host memory (pinned when the step runs on the GPU)."""
    g = torch.Generator().manual_seed(seed)
    pin = device == "cuda"
    images = [((torch.randint(0, 256, (batch, 3, 32, 32), generator=g).float() / 255 - 0.5) / 0.25)
              for _ in range(count)]
    labels = [torch.randint(0, 10, (batch,), generator=g) for _ in range(count)]
    if pin:
        images = [t.pin_memory() for t in images]
        labels = [t.pin_memory() for t in labels]
    return images, labels


class Step:
    """One training step of a fresh model on host batches, eager or replayed from a CUDA graph."""

    def __init__(self, network, batch, config, lr, seed):
        self.device = "cpu" if config == "torch-cpu" else "cuda"
        torch.manual_seed(seed)
        self.model = NETWORKS[network]().to(self.device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        self.x = torch.empty(batch, 3, 32, 32, device=self.device)
        self.y = torch.empty(batch, dtype=torch.long, device=self.device)
        self.graph = None

    def load(self, images, labels):
        self.x.copy_(images, non_blocking=True)
        self.y.copy_(labels, non_blocking=True)

    def __call__(self, images, labels):
        self.load(images, labels)
        if self.graph is not None:
            self.graph.replay()
            return
        self.opt.zero_grad()
        F.cross_entropy(self.model(self.x), self.y).backward()
        self.opt.step()

    def capture(self, images, labels):
        """PyTorch's whole-network recipe: warm up on a side stream, then capture one step.
        Gradients set to None before capture are allocated by the graph and overwritten on
        each replay, so no zero_grad is needed inside it."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(3):
                self(images[i % len(images)], labels[i % len(labels)])
        torch.cuda.current_stream().wait_stream(side)
        self.opt.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            F.cross_entropy(self.model(self.x), self.y).backward()
            self.opt.step()
        self.graph = graph


def measure(network, batch, config, args):
    device = "cpu" if config == "torch-cpu" else "cuda"
    images, labels = random_batches(args.round, batch, device, args.seed)
    step = Step(network, batch, config, args.lr, args.seed)
    if config == "torch-cuda-graph":
        step.capture(images, labels)

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    rounds = max(1, math.ceil(args.warmup / args.round))
    for _ in range(rounds):
        for b in range(args.round):
            step(images[b], labels[b])
    sync()
    times, steps, window = [], 0, time.perf_counter()
    while steps < args.steps:
        start = time.perf_counter()
        for b in range(args.round):
            step(images[b], labels[b])
        sync()
        times.append((time.perf_counter() - start) * 1000 / args.round)
        steps += args.round
        if time.perf_counter() - window > args.max_seconds:
            break
    step_ms = statistics.median(times)
    return {
        "plan": None, "scheduler": None,
        "workers": (f"{torch.get_num_threads()} CPU threads" if device == "cpu"
                    else torch.cuda.get_device_name(0)),
        "threads": torch.get_num_threads(),
        "step_ms": round(step_ms, 4), "step_ms_mean": round(statistics.mean(times), 4),
        "step_ms_min": round(min(times), 4), "images_per_s": round(batch * 1000 / step_ms, 1),
        "tasks_per_step": None, "warmup_steps": rounds * args.round, "steps": steps,
        "round": args.round,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--networks", nargs="+", default=["lenet", "wide"], choices=sorted(NETWORKS))
    p.add_argument("--batches", nargs="+", type=int, default=[64, 256])
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS)
    p.add_argument("--warmup", type=int, default=10, help="untimed steps first (whole rounds)")
    p.add_argument("--steps", type=int, default=20, help="timed steps (whole rounds)")
    p.add_argument("--round", type=int, default=5, help="steps between synchronisations")
    p.add_argument("--max-seconds", type=float, default=20,
                   help="stop timing a measurement after the round that passes this")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: default)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--math", choices=("fp32", "tf32"), default="tf32",
                   help="convolution math on the GPU: fp32 (cudnn.allow_tf32 = False) or tf32 "
                        "(PyTorch's default); matmuls keep PyTorch's default (fp32)")
    args = p.parse_args()
    if any(b < 1 for b in args.batches):
        p.error("--batches must be positive")
    if args.round < 1 or args.steps < 1 or args.warmup < 0:
        p.error("--round and --steps must be positive, --warmup not negative")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.backends.cudnn.allow_tf32 = args.math == "tf32"

    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores (load {info['loadavg']}), "
          f"gpu {info['gpu']}; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{args.math} convolutions",
          file=sys.stderr)
    print(f"{'network':8} {'batch':>6} {'config':16} {'step_ms':>10} {'images/s':>10}",
          file=sys.stderr)
    for network in args.networks:
        for batch in args.batches:
            for config in args.configs:
                row = {"engine": "pytorch", "network": network, "batch": batch, "config": config,
                       "machine": info, "openblas": openblas_env(), "torch": torch.__version__,
                       "math": args.math}
                if config != "torch-cpu" and not torch.cuda.is_available():
                    row["skipped"] = "torch.cuda.is_available() is False"
                    print(f"{network:8} {batch:6} {config:16} skipped: no CUDA", file=sys.stderr)
                else:
                    row.update(measure(network, batch, config, args))
                    print(f"{network:8} {batch:6} {config:16} {row['step_ms']:10.3f} "
                          f"{row['images_per_s']:10.1f}", file=sys.stderr)
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
