#!/usr/bin/env python3
"""How long a traced task waited between being ready and starting: for every task of a trace
folder's tasks.rec (train --trace) that ran, ready is the end of its last input task (DependsOn)
or its submission, whichever is later; the gap is its start minus ready. Prints the gap's
quantiles for CPU tasks whose last input ran on another worker (a hand-off: the releasing worker
pushed it onto another one) and on the same worker, for tasks readied by their submission, and
for StarPU's reduction tasks, and the share of dependent CPU tasks handed off. These are what
perf/task_overhead's cpu_handoff_us and cpu_chain_us stand for in simulation. Then, for the tasks
readied by an input task, the gap per codelet beside the handles its tasks name (StarPU 1.3's
cost of a release grows with them), and the gap by release order: tasks readied by the same
input task (a CPU update releasing a sample split's chains) in the order they started, the k-th
of them waiting for the k - 1 released before it. Last, each codelet's run time per worker
where it ran on two workers or more: tasks of the same work (a sample split's equal CPU chains)
that run slower on some workers than on others point at the host's cores, not at StarPU.

Usage: python3 perf/trace_gaps.py DIR [DIR...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_report import read_rec  # noqa: E402

REDUCTION = ("redux_task_between_replicates", "data_cpy")


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def waits(records):
    """(record, category, last input's JobId or None, gap us) of every task that ran."""
    by_id = {r["JobId"]: r for r in records if "JobId" in r}
    ran = [r for r in records if "StartTime" in r and "EndTime" in r and "WorkerId" in r]
    out = []
    for r in ran:
        inputs = [by_id[d] for d in r.get("DependsOn", "").split()
                  if d in by_id and "EndTime" in by_id[d]]
        last = max(inputs, key=lambda d: float(d["EndTime"])) if inputs else None
        submitted = float(r["SubmitTime"])
        if last is None or submitted > float(last["EndTime"]):
            ready, kind, released_by = submitted, "ready at submission", None
        else:
            ready, released_by = float(last["EndTime"]), last["JobId"]
            moved = last["WorkerId"] != r["WorkerId"]
            kind = "handed to another worker" if moved else "same worker"
        if r["Name"] in REDUCTION:
            kind = "reduction tasks"
        if r.get("MemoryNode", "0") != "0":  # a GPU's memory: a CUDA worker
            kind += " (CUDA worker)"
        out.append((r, kind, released_by, (float(r["StartTime"]) - ready) * 1000))
    return out


def gaps(records):
    """{category: [gap us]} of the tasks that ran."""
    out = {}
    for _, kind, _, gap in waits(records):
        out.setdefault(kind, []).append(gap)
    return out


def by_codelet(records):
    """{codelet: (median handles its tasks name, [gap us])} of the tasks readied by an input
    task."""
    handles, gaps_of = {}, {}
    for r, _, released_by, gap in waits(records):
        if released_by is None:
            continue
        handles.setdefault(r["Name"], []).append(len(r.get("Handles", "").split()))
        gaps_of.setdefault(r["Name"], []).append(gap)
    return {name: (quantile(handles[name], .5), gaps_of[name]) for name in gaps_of}


def by_release_order(records):
    """{k: [gap us]}: of the tasks readied by one input task (two or more), the k-th to start."""
    groups = {}
    for r, _, released_by, gap in waits(records):
        if released_by is not None:
            groups.setdefault(released_by, []).append((float(r["StartTime"]), gap))
    out = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        for k, (_, gap) in enumerate(sorted(group), 1):
            out.setdefault(k, []).append(gap)
    return out


def durations_by_worker(records):
    """{codelet: {worker: [run time us]}} of the codelets that ran on two workers or more."""
    out = {}
    for r in records:
        if "StartTime" in r and "EndTime" in r and "WorkerId" in r:
            run = (float(r["EndTime"]) - float(r["StartTime"])) * 1000
            out.setdefault(r["Name"], {}).setdefault(int(r["WorkerId"]), []).append(run)
    return {name: workers for name, workers in out.items() if len(workers) > 1}


def print_quantiles(title, rows):
    """rows: (label, [values]) pairs."""
    print(f"  {title:40} {'count':>6} {'p25':>7} {'median':>7} {'p75':>7} {'p90':>7}")
    for label, v in rows:
        print(f"  {label:40} {len(v):6d} {quantile(v, .25):7.1f} {quantile(v, .5):7.1f} "
              f"{quantile(v, .75):7.1f} {quantile(v, .9):7.1f}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[-1])
    for folder in sys.argv[1:]:
        records = read_rec(os.path.join(folder, "tasks.rec"))
        by_kind = gaps(records)
        print(f"{folder}: us from ready to start")
        print_quantiles("tasks", [(kind, by_kind[kind]) for kind in sorted(by_kind)])
        moved = len(by_kind.get("handed to another worker", []))
        same = len(by_kind.get("same worker", []))
        if moved + same:
            print(f"  dependent CPU tasks handed off: {moved / (moved + same):.0%}")
        codelets = by_codelet(records)
        print_quantiles("readied by an input task: codelet (handles)",
                        [(f"{name} ({handles})", v) for name, (handles, v) in
                         sorted(codelets.items(), key=lambda item: item[1][0])])
        order = by_release_order(records)
        print_quantiles("readied together: k-th to start",
                        [(str(k), order[k]) for k in sorted(order)])
        print("  run time per worker (us, median of the worker's tasks; slowest / fastest):")
        for name, workers in sorted(durations_by_worker(records).items()):
            medians = {w: quantile(v, .5) for w, v in workers.items()}
            spread = max(medians.values()) / max(min(medians.values()), 1e-9)
            cells = " ".join(f"w{w} {medians[w]:.0f} ({len(workers[w])})" for w in sorted(workers))
            print(f"  {name:40} {spread:5.2f}x  {cells}")


if __name__ == "__main__":
    main()
