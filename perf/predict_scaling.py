#!/usr/bin/env python3
"""Predicted step times on 1 to 8 GPUs from one GPU's perf models (simulate --estimate), for two
ways of spreading a step over the GPUs:
  samples  the batch cut into one micro-batch per GPU (plan cuda, --micro-batches N; the
           scheduler places each micro-batch's chain, gradients summed by StarPU reductions)
  filters  every convolution's filters cut into one part per GPU, each pinned to its device
           (conv1=F@cuda0,F@cuda1,...); the other ops on any GPU
  auto     train's measured search run on the simulated machine (--plan auto): the GPUs alone,
           the batch and the filters across them, the CPU, and CPU+GPU splits; its pick's step
           (with --auto; each search simulates every candidate for a few steps)
Writes predictions.jsonl (simulate's lines, with the mode), predictions.md and scaling.png.

  python3 perf/predict_scaling.py --simulate build-sim/perf/simulate --models perf/models/h200 \
      --out perf/results/sim-2026-12-03
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from validate_simulation import run_simulate, write_atomically  # noqa: E402


def fail(message):
    sys.exit(f"predict_scaling: {message}")


def conv_filters(network):
    """Output channels of each conv layer of a built-in network, in order."""
    path = os.path.join(HERE, "..", "model", "nn", "networks", network + ".net")
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    return [int(m.group(1)) for m in (re.match(r"\s*conv\s+(\d+)", l) for l in lines) if m]


def filter_plan(network, gpus):
    """conv1=F@cuda0,F@cuda1;conv2=...: each conv's filters in (nearly) equal parts, one per GPU
    (fewer where a layer has fewer filters than GPUs)."""
    layers = []
    for i, filters in enumerate(conv_filters(network), 1):
        parts = min(gpus, filters)
        sizes = [filters // parts + (1 if p < filters % parts else 0) for p in range(parts)]
        layers.append(f"conv{i}=" + ",".join(f"{s}@cuda{p}" for p, s in enumerate(sizes)))
    return "cuda;" + ";".join(layers)


def simulate(binary, args, timeout):
    command = [binary] + args
    return (command,) + run_simulate(command, timeout)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    nets = sorted({(r["network"], r["batch"]) for r in rows})
    fig, axes = plt.subplots(1, len(nets), figsize=(4 * len(nets), 3.6), squeeze=False)
    for ax, (network, batch) in zip(axes[0], nets):
        for mode, marker in (("samples", "o"), ("filters", "s"), ("auto", "^")):
            points = sorted((r["gpus"], r["images_per_s"]) for r in rows
                            if r["network"] == network and r["batch"] == batch
                            and r["mode"] == mode and r.get("images_per_s"))
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker,
                        label=f"{mode} across GPUs")
        base = [r["images_per_s"] for r in rows if r["network"] == network
                and r["batch"] == batch and r["gpus"] == 1 and r.get("images_per_s")]
        if base:
            ax.plot([1, 8], [base[0], 8 * base[0]], ":", color="grey", label="linear")
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8])
        ax.set_xticklabels(["1", "2", "4", "8"])
        ax.set_xlabel("simulated H200 GPUs")
        ax.set_ylabel("images/s (predicted)")
        ax.set_title(f"{network}, batch {batch}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("SimGrid predictions from one H200's perf models (dmda)", fontsize=9)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--simulate", required=True, help="build-sim/perf/simulate")
    p.add_argument("--models", required=True, help="STARPU_HOME calibrated on one GPU")
    p.add_argument("--out", required=True, help="folder for the predictions")
    p.add_argument("--networks", default="lenet,wide")
    p.add_argument("--batches", default="64,256")
    p.add_argument("--gpus", default="1,2,4,8")
    p.add_argument("--sim-args", default="--warmup 5 --steps 5 --estimate")
    p.add_argument("--timeout", type=int, default=300, help="seconds per simulation at most")
    p.add_argument("--auto", action="store_true",
                   help="also simulate train's measured auto search on each machine")
    p.add_argument("--modes", default="samples,filters,auto",
                   help="which of samples, filters and auto (with --auto) to simulate")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows, lines = [], []
    for network in a.networks.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            for gpus in [int(g) for g in a.gpus.split(",")]:
                modes = [("samples", "cuda", gpus), ("filters", filter_plan(network, gpus), 1)]
                modes = modes if gpus > 1 else modes[:1]
                if a.auto:
                    modes.append(("auto", "auto", 0))
                wanted = a.modes.split(",")
                modes = [m for m in modes if m[0] in wanted or (gpus == 1 and m[0] != "auto"
                                                                 and "samples" in wanted)]
                for mode, plan, micro in modes:
                    args = ["--models", a.models, "--network", network, "--batch", str(batch),
                            "--gpus", str(gpus), "--plan", plan, "--micro-batches", str(micro)]
                    command, sim, error = simulate(a.simulate, args + a.sim_args.split(),
                                                   a.timeout)
                    row = dict(sim or {}, mode=mode if gpus > 1 or mode == "auto" else "single GPU",
                               network=network, batch=batch, gpus=gpus,
                               plan=(sim or {}).get("plan", plan) if mode == "auto" else plan,
                               command=" ".join(command), error=error)
                    rows.append(row)
                    lines.append(json.dumps(row))
                    shown = f"{sim['step_ms']:.3f} ms" if sim else error
                    print(f"{network} b{batch} {gpus} GPUs {mode}: {shown}", file=sys.stderr)
    # The single GPU is the first point of both curves.
    for r in [r for r in rows if r["mode"] == "single GPU"]:
        rows.append(dict(r, mode="filters"))
        r["mode"] = "samples"
    write_atomically(os.path.join(a.out, "predictions.jsonl"), "\n".join(lines) + "\n")
    table = ["| network | batch | GPUs | spread | predicted step ms | images/s | "
             "estimated shapes | auto's pick |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["network"], r["batch"], r["mode"], r["gpus"])):
        if r.get("step_ms") is None:
            table.append(f"| {r['network']} | {r['batch']} | {r['gpus']} | {r['mode']} | "
                         f"- | - | {r['error']} | |")
        else:
            pick = ""
            if r["mode"] == "auto":
                pick = f"`{r['plan']}`" + (f" ({r['micro_batches']} micro-batches)"
                                           if r.get("micro_batches", 1) > 1 else "")
            table.append(f"| {r['network']} | {r['batch']} | {r['gpus']} | {r['mode']} | "
                         f"{r['step_ms']:.3f} | {r['images_per_s']:.0f} | "
                         f"{len(r['estimated_shapes'])} | {pick} |")
    write_atomically(os.path.join(a.out, "predictions.md"), "\n".join(table) + "\n")
    print("\n".join(table))
    plot([r for r in rows if r.get("step_ms") is not None], os.path.join(a.out, "scaling.png"))


if __name__ == "__main__":
    main()
