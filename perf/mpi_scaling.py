#!/usr/bin/env python3
"""Data-parallel scaling: runs `train` for a few steps on 1, 2 and 4 ranks (mpirun on this
machine, ranks sharing its cores) and reports images/s and the bytes moved between ranks per
step, as JSON lines (stdout, and OUT.jsonl) and a Markdown table (stderr, and OUT.md).

    python3 perf/mpi_scaling.py --train build/apps/train --out perf/results/DIR/mpi_scaling \\
        [--networks lenet,wide] [--ranks 1,2,4] [--ncpu-per-rank 1] [--steps lenet=60,wide=6] \\
        [--train-args '--plan cuda']

One process runs without mpirun (no MPI at all); N > 1 ranks run under mpirun with an even cut
of the global batch. images/s is train's own figure over the whole run (first steps included).
Writes OUT.jsonl and OUT.md. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys

# Ranks unbound: Open MPI would otherwise pin each rank, all its StarPU workers included, to one core.
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl",
          "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]


def summary_of(output):
    for line in reversed(output.splitlines()):
        if line.startswith('{"event": "summary"'):
            return json.loads(line)
    return None


def run(args, network, ranks, steps):
    cmd = [args.train, "--data", args.data, "--network", network, "--batch", str(args.batch),
           "--max-steps", str(steps), "--eval-every", "0", "--log-every", str(steps)]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    cmd += args.train_args.split()
    if ranks > 1:
        cmd = MPIRUN + ["-np", str(ranks)] + cmd
    env = dict(os.environ, STARPU_SILENT="1")
    if ranks == 1:
        env["STARPU_NCPU"] = str(max(args.ncpu_per_rank, 1) * args.single_cores)
    elif args.ncpu_per_rank > 0:
        env["STARPU_NCPU"] = str(args.ncpu_per_rank)
    else:  # train gives each rank its block of the host's cores
        env.pop("STARPU_NCPU", None)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    summary = summary_of(done.stdout)
    if done.returncode != 0 or summary is None:
        sys.exit(f"mpi_scaling: {' '.join(cmd)} failed (status {done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return {"network": network, "data": args.data, "batch": args.batch, "ranks": ranks,
            "cpu_workers_per_rank": int(env.get("STARPU_NCPU", 0)), "steps": summary["steps"],
            "images_per_s": summary["images_per_s"], "seconds": summary["seconds"],
            "bytes_per_step": summary.get("rank0_bytes_per_step", 0.0),
            "machine": args.machine, "command": " ".join(cmd)}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", required=True)
    p.add_argument("--out", required=True, help="results prefix: writes OUT.jsonl and OUT.md")
    p.add_argument("--networks", default="lenet,wide")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--steps", default="lenet=60,wide=6", help="steps per network")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--data", default="mnist")
    p.add_argument("--data-dir", default="")
    p.add_argument("--train-args", default="", help="more flags for every train, e.g. '--plan cuda'")
    p.add_argument("--ncpu-per-rank", type=int, default=1,
                   help="CPU workers of each of N ranks (0: train's own block of the host's cores)")
    p.add_argument("--single-cores", type=int, default=os.cpu_count() or 1,
                   help="CPU workers of the 1-rank run (default: every core)")
    p.add_argument("--machine", default=os.uname().nodename)
    args = p.parse_args()
    steps = dict(item.split("=") for item in args.steps.split(","))
    rows = []
    for network in args.networks.split(","):
        for ranks in (int(r) for r in args.ranks.split(",")):
            rows.append(run(args, network, ranks, int(steps.get(network, 20))))
            print(json.dumps(rows[-1]), flush=True)
    with open(args.out + ".jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    lines = [f"Machine: {args.machine}. Global batch {args.batch}, {args.data}; 1 rank: "
             f"{args.single_cores * max(args.ncpu_per_rank, 1)} CPU workers, no mpirun; N ranks: "
             f"{args.ncpu_per_rank or 'train-placed'} CPU workers each under mpirun.", "",
             "| network | ranks | CPU workers/rank | steps | images/s | bytes between ranks/step |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['network']} | {r['ranks']} | {r['cpu_workers_per_rank'] or 'placed'} | "
                     f"{r['steps']} | {r['images_per_s']:.0f} | {r['bytes_per_step']:.0f} |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines), file=sys.stderr)


if __name__ == "__main__":
    main()
