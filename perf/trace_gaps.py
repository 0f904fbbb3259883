#!/usr/bin/env python3
"""How long a traced task waited between being ready and starting: for every task of a trace
folder's tasks.rec (train --trace) that ran, ready is the end of its last input task (DependsOn)
or its submission, whichever is later; the gap is its start minus ready. Prints the gap's
quantiles for CPU tasks whose last input ran on another worker (a hand-off: the releasing worker
pushed it onto another one) and on the same worker, for tasks readied by their submission, and
for StarPU's reduction tasks, and the share of dependent CPU tasks handed off. These are what
perf/task_overhead's cpu_handoff_us and cpu_chain_us stand for in simulation.

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


def gaps(records):
    """{category: [gap us]} of the tasks that ran."""
    by_id = {r["JobId"]: r for r in records if "JobId" in r}
    ran = [r for r in records if "StartTime" in r and "EndTime" in r and "WorkerId" in r]
    out = {}
    for r in ran:
        inputs = [by_id[d] for d in r.get("DependsOn", "").split()
                  if d in by_id and "EndTime" in by_id[d]]
        last = max(inputs, key=lambda d: float(d["EndTime"])) if inputs else None
        submitted = float(r["SubmitTime"])
        if last is None or submitted > float(last["EndTime"]):
            ready, kind = submitted, "ready at submission"
        else:
            ready = float(last["EndTime"])
            moved = last["WorkerId"] != r["WorkerId"]
            kind = "handed to another worker" if moved else "same worker"
        if r["Name"] in REDUCTION:
            kind = "reduction tasks"
        if r.get("MemoryNode", "0") != "0":  # a GPU's memory: a CUDA worker
            kind += " (CUDA worker)"
        out.setdefault(kind, []).append((float(r["StartTime"]) - ready) * 1000)
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[-1])
    for folder in sys.argv[1:]:
        by_kind = gaps(read_rec(os.path.join(folder, "tasks.rec")))
        print(f"{folder}: us from ready to start")
        print(f"  {'tasks':40} {'count':>6} {'p25':>7} {'median':>7} {'p75':>7} {'p90':>7}")
        for kind in sorted(by_kind):
            v = by_kind[kind]
            print(f"  {kind:40} {len(v):6d} {quantile(v, .25):7.1f} {quantile(v, .5):7.1f} "
                  f"{quantile(v, .75):7.1f} {quantile(v, .9):7.1f}")
        moved = len(by_kind.get("handed to another worker", []))
        same = len(by_kind.get("same worker", []))
        if moved + same:
            print(f"  dependent CPU tasks handed off: {moved / (moved + same):.0%}")


if __name__ == "__main__":
    main()
