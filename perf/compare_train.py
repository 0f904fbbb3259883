#!/usr/bin/env python3
"""Puts starcnn's training-step timings (perf/train_benchmark) beside PyTorch's
(perf/torch/torch_train.py) as a Markdown table.

    python3 perf/compare_train.py starcnn_train.jsonl torch_train.jsonl > train.md

Each starcnn configuration is compared with PyTorch on the matching device: cpu-only with
torch-cpu, gpu-only and cpu+gpu with torch-cuda (and with torch-cuda-graph where measured).
"speed-up" is PyTorch's step time over starcnn's: above 1, starcnn is faster. Only numbers from
one run on one machine make a fair ratio; the table shows each side's machine load.
Standard library only.
"""
import argparse
import json
import sys

REFERENCES = {"cpu-only": ["torch-cpu"], "gpu-only": ["torch-cuda", "torch-cuda-graph"],
              "cpu+gpu": ["torch-cuda", "torch-cuda-graph"]}


def read_rows(paths):
    rows = []
    for path in paths:
        try:
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as e:
                        sys.exit(f"compare_train: {path} line {n}: not JSON ({e})")
                    for key in ("engine", "network", "batch", "config"):
                        if key not in row:
                            sys.exit(f"compare_train: {path} line {n}: no '{key}' field")
                    rows.append(row)
        except OSError as e:
            sys.exit(f"compare_train: cannot read {path}: {e.strerror}")
    return rows


def pick(candidates, row):
    """The PyTorch row to compare `row` with: on the CPU, the one whose thread count equals
    starcnn's CPU workers where there is one; else the last measured."""
    if not candidates:
        return None
    if row["config"] == "cpu-only":
        same = [c for c in candidates if c.get("threads") == row.get("cpu_workers")]
        if same:
            return same[-1]
    return candidates[-1]


def fmt(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="JSON-lines files of either program, in any order")
    args = p.parse_args()
    rows = read_rows(args.files)
    torch = {}  # (network, batch, config) -> PyTorch rows
    for r in rows:
        if r["engine"] == "pytorch" and "skipped" not in r:
            torch.setdefault((r["network"], r["batch"], r["config"]), []).append(r)
    ours = [r for r in rows if r["engine"] == "starcnn"]
    if not ours:
        sys.exit("compare_train: no starcnn rows (engine \"starcnn\") in the files")

    print("| network | batch | config | starcnn workers | starcnn step ms | starcnn images/s "
          "| tasks/step "
          "| PyTorch | PyTorch step ms | PyTorch images/s | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in ours:
        head = f"| {r['network']} | {r['batch']} | {r['config']} |"
        if "skipped" in r:
            print(f"{head} skipped: {r['skipped']} | | | | | | | |")
            continue
        refs = [pick(torch.get((r["network"], r["batch"], c), []), r)
                for c in REFERENCES.get(r["config"], [])]
        refs = [ref for ref in refs if ref]
        workers = f"{r.get('cpu_workers', '?')} CPU + {r.get('cuda_workers', '?')} CUDA"
        mine = (f"{head} {workers} | {fmt(r['step_ms'], 3)} | {fmt(r['images_per_s'], 0)} "
                f"| {r.get('tasks_per_step', '-')} |")
        if not refs:
            print(f"{mine} (not measured) | | | |")
        for ref in refs:
            speed_up = ref["step_ms"] / r["step_ms"] if r["step_ms"] else None
            n = ref.get("threads")
            threads = (f" ({n} thread{'' if n == 1 else 's'})" if ref["config"] == "torch-cpu"
                       else "")
            print(f"{mine} {ref['config']}{threads} | {fmt(ref['step_ms'], 3)} "
                  f"| {fmt(ref['images_per_s'], 0)} | {fmt(speed_up, 2)}x |")

    print()
    for engine in ("starcnn", "pytorch"):
        groups = {}  # one line per machine and OpenBLAS setting, with the loads seen
        for r in rows:
            if r["engine"] != engine:
                continue
            m = dict(r.get("machine") or {})
            load = m.pop("loadavg", None)
            key = json.dumps([m, r.get("openblas")], sort_keys=True)
            g = groups.setdefault(key, {"loads": [], "how": set()})
            if load is not None:
                g["loads"].append(load)
            if r.get("scheduler"):
                g["how"].add(f"scheduler {r['scheduler']}, {r['workers']}")
            if "threads" in r:
                g["how"].add(f"torch {r['torch']}, {r['threads']} thread"
                              + ("" if r["threads"] == 1 else "s"))
        for key, g in groups.items():
            m, openblas = json.loads(key)
            loads = (f"load {min(g['loads'])}-{max(g['loads'])}" if g["loads"]
                     else "load unknown")
            print(f"- {engine}: {m.get('cpu')}, {m.get('cores')} cores, GPU {m.get('gpu')}, "
                  f"{loads}; OpenBLAS env {openblas}; " + "; ".join(sorted(g["how"])))


if __name__ == "__main__":
    main()
