#!/usr/bin/env python3
"""Simulated against measured step times: for every starcnn measurement of a results.jsonl
(train_benchmark lines, and the measured candidates of its auto search), runs simulate on the
same network, batch, plan and workers with the perf models of the machine that measured it, and
writes the pairs with the relative error (JSON lines) and a Markdown table. A case measured
several times (train_benchmark --repeats) is compared by the median of its measurements.

  python3 perf/validate_simulation.py --simulate build-sim/perf/simulate \
      --results perf/results/h200-2026-12-03-a/results.jsonl \
      --models bench=perf/models/h200,bind=perf/models/h200,mps-bench=perf/models/h200-mps3 \
      --out perf/results/sim-2026-12-03
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def fail(message):
    sys.exit(f"validate_simulation: {message}")


def parse_models(text):
    models = {}
    for item in text.split(","):
        step, sep, path = item.partition("=")
        if not sep or not step or not path:
            fail(f"--models: '{item}' is not STEP=DIR")
        if not os.path.isdir(path):
            fail(f"--models: {path} is not a directory")
        models[step] = path
    return models


def cases(results_path, models):
    """(step, network, batch, config, scheduler, plan, gpus, cpus, micro_batches, measured_ms) of
    each measurement whose step has perf models (scheduler: the one it ran under, dmda in results
    older than that field)."""
    try:
        lines = open(results_path).read().splitlines()
    except OSError as e:
        fail(f"{results_path}: {e.strerror}")
    for number, line in enumerate(lines, 1):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            fail(f"{results_path} line {number} is not JSON")
        if r.get("engine") != "starcnn" or r.get("step") not in models or "step_ms" not in r:
            continue
        gpus, cpus = r["cuda_workers"], r["cpu_workers"]
        base = (r["step"], r["network"], r["batch"], r["config"], r.get("scheduler", "dmda"))
        if r["config"] != "cpu+gpu":
            yield base + (r["plan"], gpus, cpus, r["micro_batches"], r["step_ms"])
        # The search ran on every worker StarPU started with (auto may restart StarPU with one
        # CPU worker afterwards): search_cpu_workers, or, in results older than that field,
        # StarPU's default of one CPU worker per core left by the CUDA workers.
        search_cpus = r.get("search_cpu_workers", r.get("machine", {}).get("cores", cpus + gpus) -
                            gpus)
        for c in r.get("auto_candidates", []):
            if c.get("measured_ms") is not None:
                # Candidates are timed by the search (a few steps each), micro-batches as train's.
                yield base[:3] + ("auto candidate", base[4]) + (c["plan"], gpus, search_cpus, 0,
                                                                  c["measured_ms"])


def run_simulate(command, timeout, scheduler="dmda"):
    """simulate's JSON line (None on failure) and the reason it failed (None on success), under
    STARPU_SCHED=scheduler."""
    env = dict(os.environ, STARPU_SCHED=scheduler)
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"no result within {timeout} s"
    if run.returncode != 0:
        message = run.stderr.strip().splitlines()
        return None, message[-1] if message else f"exit {run.returncode}"
    return json.loads(run.stdout.strip().splitlines()[-1]), None


def simulate(binary, models, network, batch, plan, gpus, cpus, micro_batches, extra, timeout,
             scheduler="dmda"):
    command = [binary, "--models", models, "--network", network, "--batch", str(batch),
               "--plan", plan, "--gpus", str(gpus), "--cpus", str(cpus),
               "--micro-batches", str(micro_batches)] + extra
    return (command,) + run_simulate(command, timeout, scheduler)


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--simulate", required=True, help="build-sim/perf/simulate")
    p.add_argument("--results", required=True, help="results.jsonl of the real machine")
    p.add_argument("--models", required=True,
                   help="STEP=DIR,...: the calibrated STARPU_HOME of each results step")
    p.add_argument("--out", required=True, help="folder for validation.jsonl and validation.md")
    p.add_argument("--sim-args", default="--warmup 5 --steps 5",
                   help="more simulate arguments (simulation is deterministic: one round does)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per simulation at most")
    p.add_argument("--networks", help="NAME,...: only these networks' rows (a quicker re-run)")
    p.add_argument("--plans", help="REGEX: only the rows whose plan it matches whole "
                   "('cpu|samples:.*')")
    a = p.parse_args()
    models = parse_models(a.models)
    os.makedirs(a.out, exist_ok=True)
    rows, lines = [], []
    # A case measured several times (train_benchmark --repeats) is simulated once, against the
    # median of its measurements (the simulation is deterministic).
    measurements = {}
    networks = a.networks.split(",") if a.networks else None
    for case in cases(a.results, models):
        if networks and case[1] not in networks or a.plans and not re.fullmatch(a.plans, case[5]):
            continue
        measurements.setdefault(case[:-1], []).append(case[-1])
    for (step, network, batch, config, sched, plan, gpus, cpus, micro), times in \
            measurements.items():
        measured = statistics.median(times)
        command, sim, error = simulate(a.simulate, models[step], network, batch, plan, gpus, cpus,
                                       micro, a.sim_args.split(), a.timeout, sched)
        record = {"step": step, "network": network, "batch": batch, "config": config,
                  "scheduler": sched, "plan": plan, "gpus": gpus, "cpus": cpus,
                  "measured_ms": measured,
                  "measurements": times,
                  "simulated_ms": sim["step_ms"] if sim else None,
                  "error": (sim["step_ms"] - measured) / measured if sim else None,
                  "simulate_error": error, "command": f"STARPU_SCHED={sched} " + " ".join(command)}
        lines.append(json.dumps(record))
        rows.append(record)
        shown = f"{record['error'] * 100:+.1f}%" if sim else f"failed: {error}"
        print(f"{step:10} {network:6} {batch:4} {config:15} {plan:10} {gpus}/{cpus:2} "
              f"measured {measured:9.3f} simulated "
              f"{sim['step_ms'] if sim else float('nan'):9.3f} {shown}", file=sys.stderr)
    write_atomically(os.path.join(a.out, "validation.jsonl"), "\n".join(lines) + "\n")
    table = ["| models | network | batch | config | plan | GPUs/CPU workers | measured ms | "
             "simulated ms | error |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        sim = f"{r['simulated_ms']:.3f}" if r["simulated_ms"] is not None else "-"
        err = f"{r['error'] * 100:+.1f}%" if r["error"] is not None else r["simulate_error"]
        table.append(f"| {os.path.basename(models[r['step']])} | {r['network']} | {r['batch']} | "
                     f"{r['config']} | `{r['plan']}` | {r['gpus']}/{r['cpus']} | "
                     f"{r['measured_ms']:.3f} | {sim} | {err} |")
    within = [r for r in rows if r["error"] is not None]
    ok = sum(abs(r["error"]) <= 0.15 for r in within)
    table.append("")
    table.append(f"{ok} of {len(within)} simulated within 15% of the measurement "
                 f"({len(rows) - len(within)} could not be simulated).")
    write_atomically(os.path.join(a.out, "validation.md"), "\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
