#!/usr/bin/env python3
"""Medians of results.jsonl (task_overhead lines tagged with build and ab_round) per scheduler,
code (old: 8b6be34's parking, new: 4c350c4's) and whether a parking preceded the measured StarPU."""
import collections
import json
import statistics
import sys

KEYS = ["submit_us", "cpu_chain_us", "cpu_handoff_us", "cpu_parallel_chain_us", "fanout_h5_us",
        "fanout_task_released_us"]
rows = [json.loads(line) for line in open(sys.argv[1] if len(sys.argv) > 1 else "results.jsonl")]
groups = collections.defaultdict(list)
for r in rows:
    groups[(r["scheduler"], r["build"], r["after_parking"])].append(r)
print("| scheduler | parking code | after a parking | runs | " + " | ".join(KEYS) + " |")
print("|---|---|---|---:|" + "---:|" * len(KEYS))
for key in sorted(groups):
    values = [statistics.median(r[k] for r in groups[key]) for k in KEYS]
    print(f"| {key[0]} | {key[1]} | {'yes' if key[2] else 'no'} | {len(groups[key])} | " +
          " | ".join(f"{v:.3f}" for v in values) + " |")
