#!/usr/bin/env python3
"""Where PyTorch's eager training step spends its GPU time, kernel by kernel (torch.profiler), to
set beside starcnn's STARCNN_CUDA_OP_TIMES=parts table of the same network and batch.

The step is torch_train.py's (copy the batch in, zero_grad, forward, backward, SGD step). After
--warmup steps, --steps steps run under the profiler; each CUDA kernel and copy is reported with
its calls and microseconds per step, largest first: a table on stderr and one JSON line each on
stdout (then a total line).
    python3 perf/torch/torch_profile.py --network wide --batch 256 --math tf32
"""
import argparse
import json
import sys
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from torch_train import Step, machine, random_batches
from torch_nets import NETWORKS


def kernel_times(prof, steps):
    """{kernel name: [calls, microseconds]} per step, from the profiler's device events."""
    totals = defaultdict(lambda: [0, 0.0])
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        entry = totals[event.name]
        entry[0] += 1
        entry[1] += event.time_range.elapsed_us()
    return {name: (calls / steps, us / steps) for name, (calls, us) in totals.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="wide", choices=sorted(NETWORKS))
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--math", choices=("fp32", "tf32"), default="tf32")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--top", type=int, default=30, help="rows of the table on stderr")
    args = p.parse_args()
    if args.batch < 1 or args.steps < 1 or args.warmup < 0:
        p.error("--batch and --steps must be positive, --warmup not negative")
    if not torch.cuda.is_available():
        print("torch_profile: no CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 1
    torch.backends.cudnn.allow_tf32 = args.math == "tf32"
    images, labels = random_batches(4, args.batch, "cuda", 1)
    step = Step(args.network, args.batch, "torch-cuda", 0.01, 1)
    for i in range(args.warmup):
        step(images[i % 4], labels[i % 4])
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(args.steps):
            step(images[i % 4], labels[i % 4])
        torch.cuda.synchronize()
    times = kernel_times(prof, args.steps)
    total = sum(us for _, us in times.values())
    rows = sorted(times.items(), key=lambda item: -item[1][1])
    base = {"engine": "pytorch", "benchmark": "torch_profile", "network": args.network,
            "batch": args.batch, "math": args.math, "torch": torch.__version__,
            "machine": machine()}
    print(f"PyTorch {torch.__version__} eager, {args.network} b{args.batch} {args.math}: "
          f"{total / 1000:.3f} ms of GPU work a step", file=sys.stderr)
    for name, (calls, us) in rows[:args.top]:
        print(f"  {name[:70]:70} {calls:5.1f} {us / 1000:8.4f} ms {100 * us / total:5.1f}%",
              file=sys.stderr)
    for name, (calls, us) in rows:
        print(json.dumps(dict(base, kernel=name, calls_per_step=calls,
                              ms_per_step=round(us / 1000, 5))))
    print(json.dumps(dict(base, kernel="total", ms_per_step=round(total / 1000, 5))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
