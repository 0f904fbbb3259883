#!/usr/bin/env python3
"""perf/session_tables.py on results it is given (repeated measurements reduced to their median,
ratios taken from the medians; each auto run against its search), and train_benchmark --repeats
cycling through its configurations.

    session_tables_test.py SESSION_TABLES_PY TRAIN_BENCHMARK
"""
import json
import random
import statistics
import subprocess
import sys
import tempfile

tables, train_benchmark = sys.argv[1:3]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def row(step, network, batch, config, ms):
    return {"step": step, "engine": "starcnn", "network": network, "batch": batch,
            "config": config, "plan": "cuda" if config != "cpu-only" else "cpu", "step_ms": ms}


# Random step times, several per configuration, shuffled: the table must show the medians and
# all-cuda / gpu-only from them.
rng = random.Random(7)
times = {c: [rng.uniform(0.5, 9.0) for _ in range(rng.choice([3, 4, 5]))]
         for c in ("cpu-only", "gpu-only", "all-cuda", "cpu+gpu")}
rows = [row("ab-polling", "lenet", 64, c, t) for c, ts in times.items() for t in ts]
rows.append(row("other", "lenet", 64, "gpu-only", 1000.0))  # another step: must be ignored
rng.shuffle(rows)
with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    f.write("\n".join(json.dumps(r) for r in rows) + "\n")
out = subprocess.run([sys.executable, tables, f.name, "--bench-step", "ab-polling"],
                     capture_output=True, text=True)
check(out.returncode == 0, f"session_tables exit {out.returncode}: {out.stderr}")
line = next((l for l in out.stdout.splitlines() if l.startswith("| lenet | 64 |")), "")
cells = [c.strip() for c in line.strip("|").split("|")]
med = {c: statistics.median(ts) for c, ts in times.items()}
if len(cells) == 9:
    for i, c in enumerate(("cpu-only", "gpu-only", "all-cuda", "cpu+gpu")):
        check(abs(float(cells[2 + i]) - med[c]) < 1e-3, f"{c}: {cells[2 + i]} for median {med[c]:.4f}")
    check(abs(float(cells[8]) - med["all-cuda"] / med["gpu-only"]) < 0.006,
          f"all-cuda / gpu-only {cells[8]}, expected {med['all-cuda'] / med['gpu-only']:.3f}")
    best = min(med["cpu-only"], med["gpu-only"], med["all-cuda"])
    check(abs(float(cells[7]) - med["cpu+gpu"] / best) < 0.006,
          f"auto / best single {cells[7]}, expected {med['cpu+gpu'] / best:.3f}")
else:
    check(False, f"no lenet b64 row of 9 cells in:\n{out.stdout}")
check("median of" in out.stdout, "no note that cells are medians of repeats")

# With all-cuda-polling measured, a parking table: gpu-only, parked, polling and both ratios.
polling = [rng.uniform(0.5, 9.0) for _ in range(3)]
more = rows + [row("ab-polling", "lenet", 64, "all-cuda-polling", t) for t in polling]
with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    f.write("\n".join(json.dumps(r) for r in more) + "\n")
out = subprocess.run([sys.executable, tables, f.name, "--bench-step", "ab-polling"],
                     capture_output=True, text=True)
part = out.stdout.split("parked or polling", 1)[-1]
line = next((l for l in part.splitlines() if l.startswith("| lenet | 64 |")), "")
cells = [c.strip() for c in line.strip("|").split("|")]
if len(cells) == 7:
    med_polling = statistics.median(polling)
    check(abs(float(cells[4]) - med_polling) < 1e-3, f"polling {cells[4]}, median {med_polling:.4f}")
    check(abs(float(cells[5]) - med["all-cuda"] / med["gpu-only"]) < 0.006, f"parked ratio {cells[5]}")
    check(abs(float(cells[6]) - med_polling / med["gpu-only"]) < 0.006, f"polling ratio {cells[6]}")
else:
    check(False, f"no parking table row of 7 cells in:\n{out.stdout}")

# Under the MPS cap, each repeat's auto run against the search's measurement of the plan it
# chose (a "PLAN -> RESOLVED" plan matched by PLAN), with the share of the ideal gain from each.
mps, expected = [], {}
for repeat in range(3):
    cpu, allc, final = rng.uniform(3, 5), rng.uniform(2.5, 4), rng.uniform(1.8, 2.6)
    picked, other = rng.uniform(1.8, 2.6), rng.uniform(1.8, 2.6)
    mps += [dict(row("mps-x", "lenet", 256, "cpu-only", cpu), repeat=repeat),
            dict(row("mps-x", "lenet", 256, "all-cuda", allc), repeat=repeat),
            dict(row("mps-x", "lenet", 256, "cpu+gpu", final), repeat=repeat,
                 plan="samples:104 -> conv1=...",
                 auto_candidates=[{"plan": "samples:88", "measured_ms": other},
                                  {"plan": "samples:104", "measured_ms": picked}])]
    ideal = 1 / (1 / cpu + 1 / allc)
    expected[repeat + 1] = (final, picked, final / picked, (allc - final) / (allc - ideal),
                            (allc - picked) / (allc - ideal))
rng.shuffle(mps)
with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    f.write("\n".join(json.dumps(r) for r in rows + mps) + "\n")
out = subprocess.run([sys.executable, tables, f.name, "--bench-step", "ab-polling",
                      "--mps-step", "mps-x"], capture_output=True, text=True)
part = out.stdout.split("against its search (step mps-x)", 1)[-1]
found = 0
for line in part.splitlines():
    cells = [c.strip() for c in line.strip("|").split("|")]
    if len(cells) != 11 or cells[0] != "lenet":
        continue
    found += 1
    final, picked, ratio, share_final, share_search = expected[int(cells[2])]
    check(abs(float(cells[4]) - final) < 1e-3 and abs(float(cells[5]) - picked) < 1e-3,
          f"repeat {cells[2]}: final / search {cells[4]} / {cells[5]}, "
          f"expected {final:.3f} / {picked:.3f}")
    check(abs(float(cells[6]) - ratio) < 0.006,
          f"repeat {cells[2]}: ratio {cells[6]}, expected {ratio:.3f}")
    check(abs(float(cells[9].rstrip("%")) - 100 * share_final) < 0.51 and
          abs(float(cells[10].rstrip("%")) - 100 * share_search) < 0.51,
          f"repeat {cells[2]}: shares {cells[9]} {cells[10]}, expected "
          f"{share_final:.1%} {share_search:.1%}")
check(found == 3, f"{found} auto runs of 3 in:\n{out.stdout}")
check("against its search (step ab-polling)" not in out.stdout,
      "an auto-runs table for a step whose auto runs carry no search")

# train_benchmark --repeats 2 with two configurations: a, b, a, b, each line with its repeat.
r = subprocess.run([train_benchmark, "--networks", "lenet", "--batches", "4",
                    "--configs", "cpu-only,gpu-only", "--repeats", "2", "--warmup", "1",
                    "--steps", "1", "--round", "1"], capture_output=True, text=True, timeout=600)
check(r.returncode == 0, f"train_benchmark --repeats: exit {r.returncode}\n{r.stderr}")
lines = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
cpu = [l for l in lines if l["config"] == "cpu-only"]
check([l.get("repeat") for l in cpu] == [0, 1], f"cpu-only repeats: {[l.get('repeat') for l in cpu]}")
check(all("step_ms" in l for l in cpu), "a cpu-only repeat without step_ms")
bad = subprocess.run([train_benchmark, "--repeats", "0"], capture_output=True, text=True)
check(bad.returncode != 0 and "repeats" in bad.stderr, f"--repeats 0 accepted: {bad.stderr}")

print("session_tables_test:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
