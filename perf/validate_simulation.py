#!/usr/bin/env python3
"""Simulated against measured step times: for every starcnn measurement of a results.jsonl
(train_benchmark lines, and the measured candidates of its auto search), runs simulate on the
same network, batch, plan and workers with the perf models of the machine that measured it, and
writes the pairs with the relative error (JSON lines) and a Markdown table. A case measured
several times (train_benchmark --repeats) is compared by the median of its measurements.

  python3 perf/validate_simulation.py --simulate build-sim/perf/simulate \
      --results perf/results/h200-2026-12-03-a/results.jsonl \
      --models bench=perf/models/h200,bind=perf/models/h200,'mps-*=perf/models/h200-mps3' \
      --out perf/results/sim-2026-12-03

Each row is simulated with the flags it was measured with: its scheduler, --cpu-chains and
--fusion, --cuda-chain and --math (train_benchmark writes them), and --chains-rule overrides the chains mode where the
measurement ran at a commit whose `auto` meant another thing. The task count per step of the
simulation is set beside the measured one: a row whose counts differ did not simulate the task
graph that was measured. perf/validate_session runs all of it on a gpu-session folder.
"""
import argparse
import collections
import fnmatch
import json
import os
import re
import statistics
import subprocess
import sys


Case = collections.namedtuple(
    "Case", "step network batch config scheduler cpu_chains fusion cuda_chain math fold_update "
    "plan gpus cpus micro_batches tasks_per_step")


# Steps whose measurements are not the step the perf models time: op-times ran the CUDA chains'
# kernels one by one between events (STARCNN_CUDA_OP_TIMES), waiting for them at each task's end.
UNTIMED_STEPS = ("op-times-*",)


def fail(message):
    sys.exit(f"validate_simulation: {message}")


def parse_models(text):
    """{STEP pattern: DIR} of --models (STEP may be a shell pattern: 'mps-*')."""
    models = {}
    for item in text.split(","):
        step, sep, path = item.partition("=")
        if not sep or not step or not path:
            fail(f"--models: '{item}' is not STEP=DIR")
        if not os.path.isdir(path):
            fail(f"--models: {path} is not a directory")
        models[step] = path
    return models


def models_of(models, step):
    """The models of `step`: its own entry, else the first pattern that matches it (None: none)."""
    if step in models:
        return models[step]
    return next((path for pattern, path in models.items() if fnmatch.fnmatchcase(step, pattern)),
                None)


def parse_chains_rules(texts):
    """[(step pattern, config pattern, plan regex, mode)] of --chains-rule
    STEP[:CONFIG]/PLAN=MODE (CONFIG: any where left out)."""
    rules = []
    for text in texts or []:
        left, sep, mode = text.rpartition("=")
        where, slash, plan = left.partition("/")
        step, _, config = where.partition(":")
        if not sep or not slash or not step or mode not in ("auto", "pinned", "scheduled"):
            fail(f"--chains-rule: '{text}' is not STEP[:CONFIG]/PLAN_REGEX="
                 "auto|pinned|scheduled")
        rules.append((step, config or "*", re.compile(plan), mode))
    return rules


def chains_mode(rules, case):
    """The --cpu-chains mode to simulate `case` with (the mode it was measured with but where a
    rule matches its step, config and plan)."""
    for step, config, plan_regex, rule_mode in rules:
        if fnmatch.fnmatchcase(case.step, step) and fnmatch.fnmatchcase(case.config, config) \
                and plan_regex.fullmatch(case.plan):
            return rule_mode
    return case.cpu_chains


def cases(results_path, models):
    """(step, network, batch, config, scheduler, cpu_chains, fusion, cuda_chain, math, fold_update,
    plan, gpus, cpus, micro_batches, tasks_per_step, measured_ms) of each measurement whose step
    has perf models (scheduler, cpu_chains, fusion, cuda_chain, math, fold_update: as it ran,
    dmda / auto / on / off / tf32 / false in results older than those fields; tasks_per_step None for auto's candidates, whose counts are not written)."""
    try:
        lines = open(results_path).read().splitlines()
    except OSError as e:
        fail(f"{results_path}: {e.strerror}")
    for number, line in enumerate(lines, 1):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            fail(f"{results_path} line {number} is not JSON")
        if (r.get("engine") != "starcnn" or "step_ms" not in r or
                models_of(models, r.get("step", "")) is None or
                any(fnmatch.fnmatchcase(r.get("step", ""), s) for s in UNTIMED_STEPS)):
            continue
        gpus, cpus = r["cuda_workers"], r["cpu_workers"]
        base = (r["step"], r["network"], r["batch"], r["config"], r.get("scheduler", "dmda"),
                r.get("cpu_chains", "auto"), r.get("fusion", "on"), r.get("cuda_chain", "off"),
                r.get("math", "tf32"), r.get("fold_update", False))
        # A cpu+gpu line's plan is the one auto's search chose, measured again, where it
        # searched; a plan given on the command line (--plan samples:96) is measured as any other.
        if r["config"] != "cpu+gpu" or "auto_candidates" not in r:
            yield base + (r["plan"], gpus, cpus, r["micro_batches"], r.get("tasks_per_step"),
                          r["step_ms"])
        # The search ran on every worker StarPU started with (auto may restart StarPU with one
        # CPU worker afterwards): search_cpu_workers, or, in results older than that field,
        # StarPU's default of one CPU worker per core left by the CUDA workers.
        search_cpus = r.get("search_cpu_workers", r.get("machine", {}).get("cores", cpus + gpus) -
                            gpus)
        for c in r.get("auto_candidates", []):
            if c.get("measured_ms") is not None:
                # Candidates are timed by the search (a few steps each), micro-batches as train's.
                yield base[:3] + ("auto candidate",) + base[4:] + (c["plan"], gpus, search_cpus,
                                                                    0, None, c["measured_ms"])


def run_simulate(command, timeout, scheduler="dmda", fold_update=False):
    """simulate's JSON line (None on failure) and the reason it failed (None on success), under
    STARPU_SCHED=scheduler (and STARCNN_FOLD_UPDATE, as the Trainer measured ran)."""
    env = dict(os.environ, STARPU_SCHED=scheduler, STARCNN_FOLD_UPDATE="1" if fold_update else "0")
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"no result within {timeout} s"
    if run.returncode != 0:
        message = run.stderr.strip().splitlines()
        return None, message[-1] if message else f"exit {run.returncode}"
    return json.loads(run.stdout.strip().splitlines()[-1]), None


def simulate(binary, models, case, chains, extra, timeout):
    command = [binary, "--models", models, "--network", case.network, "--batch", str(case.batch),
               "--plan", case.plan, "--gpus", str(case.gpus), "--cpus", str(case.cpus),
               "--micro-batches", str(case.micro_batches), "--cpu-chains", chains,
               "--fusion", case.fusion, "--cuda-chain", case.cuda_chain, "--math", case.math] + extra
    return (command,) + run_simulate(command, timeout, case.scheduler, case.fold_update)


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
    p.add_argument("--chains-rule", action="append", metavar="STEP[:CONFIG]/PLAN_REGEX=MODE",
                   help="simulate the rows of STEP and CONFIG (shell patterns: 'mps-*', "
                   "'auto candidate') whose plan PLAN_REGEX matches whole with --cpu-chains MODE, "
                   "not the mode they were measured with (a measurement at a commit whose `auto` "
                   "meant another thing); repeatable, the first that matches counts")
    p.add_argument("--overheads", help="task_overhead.json for the models folders that lack "
                   "their own (simulate's --overheads)")
    p.add_argument("--cpu-only-overheads", help="task_overhead's line measured without CUDA "
                   "workers (a session's overhead-cpu step), for the rows that ran without any: "
                   "their StarPU (lws, every core a CPU worker) costs less per task than dmda's "
                   "beside a CUDA worker (simulate's --overheads)")
    p.add_argument("--estimate-missing", action="store_true",
                   help="simulate a row that stops on a shape the models lack again with "
                   "--estimate (its estimated shapes in validation.jsonl; lws runs record none)")
    p.add_argument("--replace-rows", action="store_true",
                   help="keep the rows of OUT/validation.jsonl and replace those simulated again "
                   "(a re-run of some rows: --plans, --networks)")
    a = p.parse_args()
    models = parse_models(a.models)
    rules = parse_chains_rules(a.chains_rule)
    for flag, path in (("--overheads", a.overheads),
                       ("--cpu-only-overheads", a.cpu_only_overheads)):
        if path and not os.path.isfile(path):
            fail(f"{flag}: {path} is not a file")
    os.makedirs(a.out, exist_ok=True)
    rows = []
    # A case measured several times (train_benchmark --repeats) is simulated once, against the
    # median of its measurements (the simulation is deterministic).
    measurements = {}
    networks = a.networks.split(",") if a.networks else None
    for values in cases(a.results, models):
        case = Case(*values[:-1])
        if networks and case.network not in networks or \
                a.plans and not re.fullmatch(a.plans, case.plan):
            continue
        measurements.setdefault(case, []).append(values[-1])
    for case, times in measurements.items():
        measured = statistics.median(times)
        home = models_of(models, case.step)
        chains = chains_mode(rules, case)
        extra = a.sim_args.split()
        if a.cpu_only_overheads and case.gpus == 0:
            extra += ["--overheads", a.cpu_only_overheads]
        elif a.overheads and not os.path.exists(os.path.join(home, "task_overhead.json")):
            extra += ["--overheads", a.overheads]
        command, sim, error = simulate(a.simulate, home, case, chains, extra, a.timeout)
        if a.estimate_missing and error and "--estimate" not in extra and \
                "no calibrated time" in error:
            command, sim, error = simulate(a.simulate, home, case, chains, extra + ["--estimate"],
                                           a.timeout)
        record = dict(case._asdict(), models=home, simulated_cpu_chains=chains,
                      measured_ms=measured, measurements=times,
                      simulated_ms=sim["step_ms"] if sim else None,
                      error=(sim["step_ms"] - measured) / measured if sim else None,
                      simulated_tasks_per_step=sim["tasks_per_step"] if sim else None,
                      overheads=sim.get("overheads") if sim else None,
                      estimated_shapes=sim.get("estimated_shapes", []) if sim else [],
                      simulate_error=error,
                      command=f"STARPU_SCHED={case.scheduler} " +
                      ("STARCNN_FOLD_UPDATE=1 " if case.fold_update else "") + " ".join(command))
        rows.append(record)
        shown = f"{record['error'] * 100:+.1f}%" if sim else f"failed: {error}"
        print(f"{case.step:12} {case.network:6} {case.batch:4} {case.config:15} {case.plan:10} "
              f"{chains:9} {case.gpus}/{case.cpus:2} tasks {tasks_shown(record):7} "
              f"measured {measured:9.3f} simulated "
              f"{sim['step_ms'] if sim else float('nan'):9.3f} {shown}", file=sys.stderr)
    if a.replace_rows:
        rows = replaced_rows(os.path.join(a.out, "validation.jsonl"), rows)
    write_atomically(os.path.join(a.out, "validation.jsonl"),
                     "".join(json.dumps(r) + "\n" for r in rows))
    write_atomically(os.path.join(a.out, "validation.md"), "\n".join(table(rows)) + "\n")
    print("\n".join(table(rows)))


def replaced_rows(path, rows):
    """The rows of `path` (validation.jsonl), each replaced by the row of `rows` of the same
    case where there is one, then the rest of `rows`."""
    def key(r):
        return tuple(r[k] for k in ("step", "network", "batch", "config", "scheduler", "plan",
                                    "gpus", "cpus", "micro_batches"))
    new = {key(r): r for r in rows}
    try:
        with open(path) as f:
            old = [json.loads(text) for text in f]
    except OSError as e:
        fail(f"--replace-rows: {path}: {e.strerror}")
    merged = [new.pop(key(r), r) for r in old]
    return merged + [r for r in rows if key(r) in new]


def tasks_shown(r):
    """Measured/simulated tasks per step, '!' where they differ ('-' where one is unknown)."""
    measured, simulated = r["tasks_per_step"], r["simulated_tasks_per_step"]
    text = f"{'-' if measured is None else measured}/{'-' if simulated is None else simulated}"
    return text + (" !" if None not in (measured, simulated) and measured != simulated else "")


def table(rows):
    """validation.md: one line a row, then the count within 15%."""
    lines = ["| step | models | network | batch | config | sched | chains | plan | "
             "GPUs/CPU workers | tasks meas./sim. | measured ms (range) | simulated ms | error |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        sim = f"{r['simulated_ms']:.3f}" if r["simulated_ms"] is not None else "-"
        err = f"{r['error'] * 100:+.1f}%" if r["error"] is not None else r["simulate_error"]
        if r["estimated_shapes"]:
            err += f" (est. {len(r['estimated_shapes'])})"
        chains = r["simulated_cpu_chains"]
        if chains != r["cpu_chains"]:
            chains = f"{chains} (ran {r['cpu_chains']})"
        lines.append(f"| {r['step']} | {os.path.basename(r['models'])} | {r['network']} | "
                     f"{r['batch']} | {r['config']} | {r['scheduler']} | {chains} | "
                     f"`{r['plan']}` | {r['gpus']}/{r['cpus']} | {tasks_shown(r)} | "
                     f"{r['measured_ms']:.3f} ({min(r['measurements']):.3f}-"
                     f"{max(r['measurements']):.3f}) | {sim} | {err} |")
    within = [r for r in rows if r["error"] is not None]
    ok = sum(abs(r["error"]) <= 0.15 for r in within)
    estimated = sum(bool(r["estimated_shapes"]) for r in within)
    lines.append("")
    lines.append(f"{ok} of {len(within)} simulated within 15% of the measurement "
                 f"({len(rows) - len(within)} could not be simulated; {estimated} with estimated "
                 f"shapes; tasks per step differ in {sum(tasks_shown(r).endswith('!') for r in rows)}"
                 f").")
    lines += issue_table(rows)
    lines += ["", "| step | rows | within 15% / simulated | error range |", "|---|---|---|---|"]
    groups = {}
    for r in rows:
        groups.setdefault((r["step"], kind(r)), []).append(r)
    for (step, name), group in groups.items():
        errors = sorted(r["error"] for r in group if r["error"] is not None)
        ok = sum(abs(e) <= 0.15 for e in errors)
        span = f"{errors[0] * 100:+.1f}% to {errors[-1] * 100:+.1f}%" if errors else "-"
        lines.append(f"| {step} | {name} | {ok} / {len(errors)} | {span} |")
    return lines


def issue_table(rows):
    """The validation table of the whole GPU: for each network and batch, the all-CUDA and
    all-CPU steps of the `bench` step and the given splits of the `splits-*` steps (gpu-session's
    step splits); empty where the session has none of them."""
    def cell(r):
        if r["error"] is None:
            return f"{r['measured_ms']:.3f} / not simulated"
        return f"{r['measured_ms']:.3f} / {r['simulated_ms']:.3f} ({r['error'] * 100:+.1f}%)"
    picked = [r for r in rows if (
        r["step"] == "bench" and r["config"] in ("cpu-only", "all-cuda") or
        r["step"].startswith("splits-") and r["config"] == "cpu+gpu")]
    if not any(r["step"].startswith("splits-") for r in picked):
        return []
    lines = ["", "The whole GPU's validation table (measured / simulated ms, error): all-CUDA "
             "and all-CPU from step bench, the splits from steps splits-*.", "",
             "| network | batch | all-CUDA | all-CPU | splits |", "|---|---:|---|---|---|"]
    shapes = sorted({(r["network"], r["batch"]) for r in picked})
    for network, batch in shapes:
        mine = [r for r in picked if (r["network"], r["batch"]) == (network, batch)]
        by_config = {c: [cell(r) for r in mine if r["config"] == c]
                     for c in ("all-cuda", "cpu-only")}
        splits = "; ".join(f"`{r['plan']}` {cell(r)}" for r in mine if r["config"] == "cpu+gpu")
        lines.append(f"| {network} | {batch} | {', '.join(by_config['all-cuda']) or '-'} | "
                     f"{', '.join(by_config['cpu-only']) or '-'} | {splits or '-'} |")
    ok = sum(r["error"] is not None and abs(r["error"]) <= 0.15 for r in picked)
    lines += ["", f"{ok} of {len(picked)} of this table within 15%."]
    return lines


def kind(r):
    """A row's kind for the summary: its config, auto's candidates by their plan's kind."""
    if r["config"] != "auto candidate":
        return r["config"] + ("" if r["config"] != "cpu+gpu" else f" `{r['plan'].split(':')[0]}`")
    plan = r["plan"]
    name = "samples" if plan.startswith("samples") else plan if ";" not in plan else "filters"
    return f"auto candidate `{name}`"


if __name__ == "__main__":
    main()
