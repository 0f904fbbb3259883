#!/usr/bin/env python3
"""PyTorch timings of every op of the seed's net (lenet on 3x32x32), one JSON line per op.

The same ops, shapes and batches as perf/op_benchmark, so the two can be put side by side:
    python3 perf/torch/torch_ops.py --batches 64 256 --devices cpu cuda > torch_ops.jsonl
CPU timings use one thread (a StarPU CPU task runs on one core); GPU timings use CUDA events.
"""
import argparse
import json
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def lenet_ops(batch, device):
    """(layer, op, callable) for each forward and backward op of lenet at this batch."""
    g = torch.Generator(device="cpu").manual_seed(batch)

    def rand(*shape):
        return torch.rand(*shape, generator=g).mul_(2).sub_(1).to(device)

    ops = []

    def conv(name, c_in, c_out, size):
        x, w, b = rand(batch, c_in, size, size), rand(c_out, c_in, 5, 5), rand(c_out)
        dy = rand(batch, c_out, size - 4, size - 4)
        ops.append((name, "conv2d_forward", lambda: F.conv2d(x, w, b)))
        ops.append((name, "conv2d_backward_filter",
                    lambda: (torch.nn.grad.conv2d_weight(x, w.shape, dy), dy.sum((0, 2, 3)))))
        ops.append((name, "conv2d_backward_data",
                    lambda: torch.nn.grad.conv2d_input(x.shape, w, dy)))
        y = rand(batch, c_out, size - 4, size - 4)
        ops.append((name, "relu_forward", lambda: F.relu(y)))
        ops.append((name, "relu_backward", lambda: torch.ops.aten.threshold_backward(dy, y, 0.0)))
        p, idx = F.max_pool2d(y, 2, return_indices=True)
        dp = rand(*p.shape)
        ops.append((name, "maxpool_forward", lambda: F.max_pool2d(y, 2, return_indices=True)))
        ops.append((name, "maxpool_backward",
                    lambda: torch.ops.aten.max_pool2d_with_indices_backward(
                        dp, y, [2, 2], [2, 2], [0, 0], [1, 1], False, idx)))
        ops.append((name, "sgd_update", sgd_step(w)))

    def linear(name, n_in, n_out):
        x, w, b, dy = rand(batch, n_in), rand(n_out, n_in), rand(n_out), rand(batch, n_out)
        ops.append((name, "linear_forward", lambda: F.linear(x, w, b)))
        ops.append((name, "linear_backward", lambda: (dy @ w, dy.t() @ x, dy.sum(0))))
        ops.append((name, "sgd_update", sgd_step(w)))

    def sgd_step(param):
        p = param.clone().requires_grad_(True)
        p.grad = torch.rand_like(p)
        opt = torch.optim.SGD([p], lr=0.01, momentum=0.9, weight_decay=5e-4)
        return opt.step

    conv("conv1", 3, 6, 32)
    conv("conv2", 6, 16, 14)
    linear("fc1", 400, 120)
    linear("fc2", 120, 84)
    linear("fc3", 84, 10)
    z, labels = rand(batch, 10), torch.randint(0, 10, (batch,), generator=g).to(device)
    ops.append(("loss", "softmax_xent_forward", lambda: F.cross_entropy(z, labels)))
    ops.append(("loss", "softmax_xent_backward",
                lambda: (F.softmax(z, 1) - F.one_hot(labels, 10)) / batch))
    return ops


def time_op(fn, device, repeats):
    """Median microseconds per call over `repeats` timed batches of calls."""
    for _ in range(10):
        fn()
    calls = 20
    samples = []
    for _ in range(repeats):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / calls)
        else:
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples.append((time.perf_counter() - t0) * 1e6 / calls)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--devices", nargs="+", default=["cpu", "cuda"], choices=["cpu", "cuda"])
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds per op (median)")
    args = parser.parse_args()

    torch.set_num_threads(1)
    machine = platform.node() + " " + platform.processor()
    if "cuda" in args.devices and not torch.cuda.is_available():
        print("torch_ops: no CUDA device; timing the CPU only", file=sys.stderr)
        args.devices = [d for d in args.devices if d != "cuda"]
    if "cuda" in args.devices:
        machine += " / " + torch.cuda.get_device_name(0)
    rows = []
    with torch.no_grad():
        for device in args.devices:
            for batch in args.batches:
                for layer, op, fn in lenet_ops(batch, device):
                    us = time_op(fn, device, args.repeats)
                    row = {"engine": "pytorch", "torch": torch.__version__, "device": device,
                           "batch": batch, "layer": layer, "op": op, "us_per_call": round(us, 2),
                           "threads": torch.get_num_threads(), "machine": machine}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    print(f"# {'device':6} {'batch':>5} {'layer':6} {'op':24} {'us/call':>10}", file=sys.stderr)
    for r in rows:
        print(f"# {r['device']:6} {r['batch']:5} {r['layer']:6} {r['op']:24} {r['us_per_call']:10.1f}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
