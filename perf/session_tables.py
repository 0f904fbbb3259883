#!/usr/bin/env python3
"""Markdown tables from scripts/gpu-session's results.jsonl (train_benchmark and torch_train lines,
each tagged with its session step):

  plans      per (network, batch): cpu-only, gpu-only, all-cuda and cpu+gpu (auto) step times,
             auto against the best single device and all-cuda against gpu-only, for the whole GPU
             (step `bench`) and under the MPS cap (step `mps-bench`), where the ideal co-execution
             step 1/(1/T_cpu + 1/T_gpu) and the share of the ideal gain auto reached are added
  parking    gpu-only, all-cuda (idle CPU workers parked) and all-cuda-polling (left polling), where
             a step measured all-cuda-polling
  auto runs  each repeat's auto run beside the search's own measurement of the plan it chose
             (a final run slower than its search shows as final / search above 1), and under the
             MPS cap the share of the ideal gain from either
  engines    starcnn beside PyTorch for each device alone (CPU, FP32 and TF32 GPU; strict FP32
             from the step `bench-fp32`)

    python3 perf/session_tables.py OUT/results.jsonl [--bench-step bench] [--mps-step mps-bench]
                                   [--fp32-step bench-fp32]
"""
import argparse
import json
import statistics
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return rows


def index(rows, step, engine):
    """(network, batch, config) -> the row, for one session step and engine. A key measured
    several times (train_benchmark --repeats, or a step run in several rounds) gets the row of its
    median step time, with "repeats" (how many) and "range_ms" (fastest, slowest) added."""
    groups = {}
    for r in rows:
        if r.get("step") == step and r.get("engine") == engine and "step_ms" in r:
            groups.setdefault((r["network"], r["batch"], r["config"]), []).append(r)
    table = {}
    for key, group in groups.items():
        group = sorted(group, key=lambda r: r["step_ms"])
        row = dict(group[(len(group) - 1) // 2])
        row["step_ms"] = statistics.median(r["step_ms"] for r in group)
        row["repeats"] = len(group)
        row["range_ms"] = (group[0]["step_ms"], group[-1]["step_ms"])
        table[key] = row
    return table


def repeats_note(table):
    counts = sorted({r["repeats"] for r in table.values()})
    if counts == [1]:
        return ""
    return (f"\nEach cell is the median of {'/'.join(map(str, counts))} measurements of the "
            "configuration, taken in turn with the others.\n")


def ms(row):
    return f"{row['step_ms']:.3f}" if row else "-"


def ideal_ms(cpu_ms, cuda_ms):
    """The co-execution step if both sides' work split with nothing lost: 1/(1/T_cpu + 1/T_gpu)."""
    return 1 / (1 / cpu_ms + 1 / cuda_ms)


def share_of_gain(cpu_ms, cuda_ms, ms):
    """How much of the ideal step's gain over all-cuda a step of `ms` reached, as a percentage."""
    gain = cuda_ms - ideal_ms(cpu_ms, cuda_ms)
    return f"{(cuda_ms - ms) / gain:.0%}" if gain > 0 else "-"


def plans_table(rows, step, capped):
    t = index(rows, step, "starcnn")
    if not t:
        return f"(no train_benchmark lines of step {step})\n"
    head = "| network | batch | cpu-only | gpu-only | all-cuda | auto | auto's plan | auto / best single |"
    head += " ideal | share of ideal gain |" if capped else " all-cuda / gpu-only |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for network, batch in sorted({(k[0], k[1]) for k in t}):
        get = lambda c: t.get((network, batch, c))
        cpu, gpu, allc, auto = get("cpu-only"), get("gpu-only"), get("all-cuda"), get("cpu+gpu")
        singles = [r["step_ms"] for r in (cpu, gpu, allc) if r]
        cells = [network, str(batch), ms(cpu), ms(gpu), ms(allc), ms(auto),
                 f"`{auto['plan']}`" if auto else "-"]
        cells.append(f"{auto['step_ms'] / min(singles):.2f}" if auto and singles else "-")
        if capped:
            if cpu and allc:
                cells.append(f"{ideal_ms(cpu['step_ms'], allc['step_ms']):.3f}")
                cells.append(share_of_gain(cpu["step_ms"], allc["step_ms"], auto["step_ms"])
                             if auto else "-")
            else:
                cells += ["-", "-"]
        else:
            cells.append(f"{allc['step_ms'] / gpu['step_ms']:.2f}" if allc and gpu else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n" + repeats_note(t)


def searched_ms(row):
    """The search's measurement of the plan an auto run chose (None without one)."""
    chosen = row.get("plan", "").split(" -> ")[0]
    for c in row.get("auto_candidates") or []:
        if c.get("plan") == chosen and c.get("measured_ms") is not None:
            return c["measured_ms"]
    return None


def auto_runs_table(rows, step, capped):
    """One line per (network, batch, repeat) whose auto run carries its search's candidates."""
    runs = {}
    for r in rows:
        if r.get("step") == step and r.get("engine") == "starcnn" and "step_ms" in r:
            runs.setdefault((r["network"], r["batch"], r.get("repeat", 0)), {})[r["config"]] = r
    keys = sorted(k for k, v in runs.items() if "cpu+gpu" in v and searched_ms(v["cpu+gpu"]))
    if not keys:
        return None
    head = "| network | batch | repeat | auto's plan | final | in the search | final / search |"
    if capped:
        head += " cpu-only | all-cuda | share of ideal gain, final | from the search |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for network, batch, repeat in keys:
        run = runs[(network, batch, repeat)]
        auto = run["cpu+gpu"]
        final, searched = auto["step_ms"], searched_ms(auto)
        cells = [network, str(batch), str(repeat + 1), f"`{auto['plan']}`", f"{final:.3f}",
                 f"{searched:.3f}", f"{final / searched:.2f}"]
        if capped:
            cpu, allc = run.get("cpu-only"), run.get("all-cuda")
            cells += [ms(cpu), ms(allc)]
            if cpu and allc:
                cells += [share_of_gain(cpu["step_ms"], allc["step_ms"], t)
                          for t in (final, searched)]
            else:
                cells += ["-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def parking_table(rows, step):
    t = index(rows, step, "starcnn")
    shapes = sorted({(k[0], k[1]) for k in t if k[2] == "all-cuda-polling"})
    if not shapes:
        return None
    lines = ["| network | batch | gpu-only | all-cuda (parked) | all-cuda-polling | parked / gpu-only |"
             " polling / gpu-only |", "|---|---|---|---|---|---|---|"]
    for network, batch in shapes:
        gpu, parked, polling = (t.get((network, batch, c))
                                for c in ("gpu-only", "all-cuda", "all-cuda-polling"))
        ratio = lambda r: f"{r['step_ms'] / gpu['step_ms']:.2f}" if r and gpu else "-"
        lines.append(f"| {network} | {batch} | {ms(gpu)} | {ms(parked)} | {ms(polling)} | "
                     f"{ratio(parked)} | {ratio(polling)} |")
    return "\n".join(lines) + "\n" + repeats_note(t)


def engines_table(rows, bench_step, torch_steps, fp32_step):
    s = index(rows, bench_step, "starcnn")
    fp32 = index(rows, fp32_step, "starcnn")
    torch = {}
    for step in torch_steps:
        for key, r in index(rows, step, "pytorch").items():
            torch[key + (r.get("math", "tf32"),)] = r
    if not s:
        return f"(no train_benchmark lines of step {bench_step})\n"
    shapes = sorted({(k[0], k[1]) for k in s})
    lines = ["| config | " + " | ".join(f"{n} b{b}" for n, b in shapes) + " |",
             "|---|" + "---|" * len(shapes)]

    def row(label, get):
        lines.append(f"| {label} | " + " | ".join(ms(get(n, b)) for n, b in shapes) + " |")

    row("starcnn cpu-only", lambda n, b: s.get((n, b, "cpu-only")))
    row("PyTorch CPU", lambda n, b: torch.get((n, b, "torch-cpu", "fp32")))
    row("starcnn gpu-only", lambda n, b: s.get((n, b, "gpu-only")))
    row("PyTorch eager, tf32 (default)", lambda n, b: torch.get((n, b, "torch-cuda", "tf32")))
    if fp32:
        row(f"starcnn gpu-only, strict fp32 ({fp32_step})",
            lambda n, b: fp32.get((n, b, "gpu-only")))
    row("PyTorch eager, fp32", lambda n, b: torch.get((n, b, "torch-cuda", "fp32")))
    row("PyTorch CUDA graph, tf32", lambda n, b: torch.get((n, b, "torch-cuda-graph", "tf32")))
    row("PyTorch CUDA graph, fp32", lambda n, b: torch.get((n, b, "torch-cuda-graph", "fp32")))
    lines.append("| starcnn tasks per step (cpu-only / gpu-only) | " + " | ".join(
        f"{(s.get((n, b, 'cpu-only')) or {}).get('tasks_per_step', '-')} / "
        f"{(s.get((n, b, 'gpu-only')) or {}).get('tasks_per_step', '-')}" for n, b in shapes) + " |")
    maths = {r.get("math") for r in s.values() if r.get("math")}
    note = f"starcnn math: {', '.join(sorted(maths))}" if maths else "starcnn math: not recorded"
    if fp32:
        fp32_maths = sorted({r.get("math") or "?" for r in fp32.values()})
        note += f" ({fp32_step}: {', '.join(fp32_maths)})"
    return "\n".join(lines) + f"\n\n{note}\n"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results")
    p.add_argument("--bench-step", default="bench")
    p.add_argument("--mps-step", default="mps-bench")
    p.add_argument("--torch-steps", nargs="+", default=["torch-fp32", "torch-tf32"])
    p.add_argument("--fp32-step", default="bench-fp32")
    args = p.parse_args()
    try:
        rows = load(args.results)
    except OSError as e:
        sys.exit(f"session_tables: {e}")
    print(f"## Plans, whole GPU (step {args.bench_step})\n")
    print(plans_table(rows, args.bench_step, capped=False))
    steps = dict.fromkeys([args.bench_step] + sorted({r.get("step") for r in rows if
                                                       r.get("config") == "all-cuda-polling"}))
    for step in steps:
        table = parking_table(rows, step)
        if table:
            print(f"## Idle CPU workers parked or polling (step {step})\n")
            print(table)
    print(f"## Plans under the MPS cap (step {args.mps_step})\n")
    print(plans_table(rows, args.mps_step, capped=True))
    for step, capped in ((args.bench_step, False), (args.mps_step, True)):
        table = auto_runs_table(rows, step, capped)
        if table:
            print(f"## Each auto run against its search (step {step})\n")
            print(table)
    print(f"## Each device alone against PyTorch (steps {args.bench_step}, {args.fp32_step}, "
          f"{', '.join(args.torch_steps)})\n")
    print(engines_table(rows, args.bench_step, args.torch_steps, args.fp32_step))


if __name__ == "__main__":
    main()
