#!/usr/bin/env python3
"""Trains the same network for the same number of steps under every StarPU scheduling policy
and compares them: step time, images/s, worker idle fraction, bytes moved between RAM and the
GPUs, and the test accuracy reached.

    python3 perf/compare_schedulers.py --data-dir data --steps 200 --out sched-results

Each policy runs in its own process of the train program (STARPU_SCHED=<policy>, --max-steps,
--stats, evaluation on the test set at the end). Perf models are calibrated first, by default
in one shared run (STARPU_CALIBRATE=1, dmda) whose STARPU_HOME every measured run then reads;
--calibrate per-policy runs a calibration under each policy instead. The output folder gets
results.csv, results.md, images_per_s.png (matplotlib if importable, else gnuplot) and each
run's stdout/stderr under logs/. A policy that fails (non-zero exit, crash, timeout, no JSON
summary) stays in the results as failed, with the last lines of its stderr.
Standard library only (plus matplotlib or gnuplot for the chart).
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time

# StarPU 1.3.10's policies (src/core/sched_policy.c), used when the train program cannot list
# them itself. "heft" is not among them: 1.3 maps it to dmda with a warning.
KNOWN_POLICIES = [
    "eager", "random", "ws", "lws", "prio", "dm", "dmda", "dmdap", "dmdar", "dmdas", "dmdasd",
    "pheft", "peager", "heteroprio", "graph_test", "modular-eager", "modular-eager-prefetching",
    "modular-eager-prio", "modular-gemm", "modular-prio", "modular-prio-prefetching",
    "modular-random", "modular-random-prio", "modular-random-prefetching",
    "modular-random-prio-prefetching", "modular-prandom", "modular-prandom-prio", "modular-ws",
    "modular-heft", "modular-heft-prio", "modular-heft2", "modular-heteroprio",
    "modular-heteroprio-heft", "modular-pheft",
]

CSV_FIELDS = [
    "policy", "status", "step_s", "images_per_s", "idle_fraction", "cpu_busy_fraction",
    "cuda_busy_fraction", "cpu_tasks", "cuda_tasks", "bytes_ram_to_gpu", "bytes_gpu_to_ram",
    "bytes_gpu_to_gpu", "test_accuracy", "train_loss", "steps", "workers", "wall_s", "error",
]


def default_train():
    for path in ("build/apps/train", "bundle/bin/train"):
        if os.path.exists(path):
            return path
    return "build/apps/train"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", default=default_train(),
                   help="the train program (default: build/apps/train, else bundle/bin/train)")
    p.add_argument("--data", default="mnist", help="train's --data (default mnist)")
    p.add_argument("--data-dir", default=None, help="train's --data-dir")
    p.add_argument("--network", default="lenet", help="train's --network (default lenet)")
    p.add_argument("--batch", type=int, default=64, help="samples per step (default 64)")
    p.add_argument("--steps", type=int, default=200, help="training steps per run (default 200)")
    p.add_argument("--plan", default="none", help="train's --plan, the same for every policy")
    p.add_argument("--policies", default="all",
                   help="comma-separated policies, or 'all' (those the train program's StarPU "
                        "lists under STARPU_SCHED=help; default)")
    p.add_argument("--calibrate", choices=["shared", "per-policy", "none"], default="shared",
                   help="one calibration run before all (default), one per policy, or none")
    p.add_argument("--starpu-home", default=None,
                   help="STARPU_HOME of every run (perf models, bus calibration); default "
                        "OUT/starpu-home")
    p.add_argument("--out", default="sched-results", help="output folder")
    p.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.batch < 1:
        p.error("--steps and --batch must be positive")
    return args


def train_command(args, steps, evaluate):
    cmd = [args.train, "--data", args.data, "--network", args.network, "--batch",
           str(args.batch), "--plan", args.plan, "--max-steps", str(steps), "--epochs", "100000",
           "--log-every", str(steps), "--eval-every", "1" if evaluate else "0", "--stats"]
    if args.data_dir:
        cmd[1:1] = ["--data-dir", args.data_dir]
    return cmd


def run_env(args, policy, calibrate):
    env = dict(os.environ)
    env.update(STARPU_SCHED=policy, STARPU_HOME=args.starpu_home, STARPU_SILENT="1",
               STARPU_FXT_TRACE="0", STARPU_CALIBRATE="1" if calibrate else "0")
    return env


def last_lines(text, n=3):
    lines = []
    for line in text.splitlines():
        if line.strip() and (not lines or lines[-1] != line.strip()):
            lines.append(line.strip())
    return " | ".join(lines[-n:])


def find_summary(stdout):
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{") and '"event": "summary"' in line:
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def run_train(args, policy, steps, evaluate, calibrate, log_name):
    """Runs train once; returns (summary dict or None, error text or "", wall seconds)."""
    cmd = train_command(args, steps, evaluate)
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, env=run_env(args, policy, calibrate), capture_output=True,
                              text=True, timeout=args.timeout)
        stdout, stderr, rc = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        write_log(args.out, log_name, out, err)
        return None, f"timeout after {args.timeout:g} s: {last_lines(err)}".rstrip(": "), \
            time.monotonic() - start
    except OSError as e:
        return None, f"cannot run {args.train}: {e.strerror}", 0.0
    wall = time.monotonic() - start
    write_log(args.out, log_name, stdout, stderr)
    summary = find_summary(stdout)
    if rc != 0:
        what = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        return None, f"{what}: {last_lines(stderr)}".rstrip(": "), wall
    if summary is None:
        return None, f"no JSON summary: {last_lines(stderr)}".rstrip(": "), wall
    if policy != "help" and summary.get("scheduler") != policy:
        # StarPU falls back to its default policy for a name it does not know.
        return None, f"StarPU ran {summary.get('scheduler')} instead: " \
            f"{last_lines(stderr)}".rstrip(": "), wall
    return summary, "", wall


def write_log(out, name, stdout, stderr):
    logs = os.path.join(out, "logs")
    os.makedirs(logs, exist_ok=True)
    for suffix, text in (("stdout", stdout), ("stderr", stderr)):
        with open(os.path.join(logs, f"{name}.{suffix}"), "w") as f:
            f.write(text or "")


def record(policy, summary, error, wall):
    """One result row from a run's JSON summary (or its error)."""
    row = {field: None for field in CSV_FIELDS}
    row.update(policy=policy, wall_s=round(wall, 2))
    if summary is None:
        row.update(status="failed", error=error)
        return row
    stats = summary.get("stats") or {}
    workers = stats.get("workers") or {}
    moved = stats.get("bytes") or {}
    ips = summary.get("images_per_s")
    row.update(
        status="ok", error="", images_per_s=ips, steps=summary.get("steps"),
        step_s=summary["batch"] / ips if ips else None,
        idle_fraction=stats.get("idle_fraction"),
        cpu_busy_fraction=(workers.get("cpu") or {}).get("busy_fraction"),
        cuda_busy_fraction=(workers.get("cuda") or {}).get("busy_fraction"),
        cpu_tasks=(workers.get("cpu") or {}).get("tasks"),
        cuda_tasks=(workers.get("cuda") or {}).get("tasks"),
        bytes_ram_to_gpu=moved.get("ram_to_gpu"), bytes_gpu_to_ram=moved.get("gpu_to_ram"),
        bytes_gpu_to_gpu=moved.get("gpu_to_gpu"), test_accuracy=summary.get("test_accuracy"),
        train_loss=summary.get("train_loss"), workers=summary.get("workers"))
    return row


def list_policies(args):
    """The policies the train program's StarPU offers (STARPU_SCHED=help), else KNOWN_POLICIES."""
    try:
        done = subprocess.run(train_command(args, 1, False), env=run_env(args, "help", False),
                              capture_output=True, text=True, timeout=args.timeout)
        text = done.stdout + done.stderr
    except (OSError, subprocess.TimeoutExpired):
        return KNOWN_POLICIES
    names = [line.split()[0] for line in text.splitlines() if "\t-> " in line or " -> " in line]
    return names or KNOWN_POLICIES


def fmt(value, scale=1.0, digits=1):
    return "-" if value is None else f"{value * scale:.{digits}f}"


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if row.get(k) is None else row[k] for k in CSV_FIELDS})


def markdown_table(rows, title=""):
    """Successful runs by images/s, fastest first, then the failed ones with their errors."""
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: -(r["images_per_s"] or 0))
    failed = [r for r in rows if r["status"] != "ok"]
    lines = [f"{title}\n" if title else ""]
    lines.append("| policy | step ms | images/s | idle % | CPU busy % | CUDA busy % "
                 "| RAM->GPU MB | GPU->RAM MB | GPU->GPU MB | test acc % |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in ok:
        lines.append(
            f"| {r['policy']} | {fmt(r['step_s'], 1e3, 2)} | {fmt(r['images_per_s'], 1, 0)} "
            f"| {fmt(r['idle_fraction'], 100)} | {fmt(r['cpu_busy_fraction'], 100)} "
            f"| {fmt(r['cuda_busy_fraction'], 100)} | {fmt(r['bytes_ram_to_gpu'], 1e-6)} "
            f"| {fmt(r['bytes_gpu_to_ram'], 1e-6)} | {fmt(r['bytes_gpu_to_gpu'], 1e-6)} "
            f"| {fmt(r['test_accuracy'], 100, 2)} |")
    for r in failed:
        lines.append(f"| {r['policy']} | failed (below) | | | | | | | | |")
    if failed:
        lines.append("\nFailed:\n")
        for r in failed:
            error = (r["error"] or "unknown error").replace("|", "\\|")
            lines.append(f"- `{r['policy']}`: {error}")
    return "\n".join(lines).lstrip("\n") + "\n"


def plot(rows, path, title):
    """Bar chart of images/s per policy; failed policies get no bar and a 'failed' label.
    Returns the tool used, or None when neither matplotlib nor gnuplot is there."""
    names = [r["policy"] for r in rows]
    values = [r["images_per_s"] if r["status"] == "ok" else 0 for r in rows]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    if plt is not None:
        fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1.5))
        ax.barh(names, values, color=["tab:blue" if v else "tab:red" for v in values])
        for y, (r, v) in enumerate(zip(rows, values)):
            ax.text(v, y, f" {v:.0f}" if v else " failed", va="center", fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("images/s (higher is better)")
        ax.set_title(title, fontsize=10)
        ax.set_xlim(0, max(values + [1]) * 1.15)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return "matplotlib"
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        return None
    data = path + ".dat"
    with open(data, "w") as f:
        for i, (name, value) in enumerate(zip(names, values)):
            f.write(f'{i} "{name}" {value} "{f"{value:.0f}" if value else "failed"}"\n')
    top = max(values + [1]) * 1.15
    safe_title = title.replace('"', "'")
    height = int(22 * len(rows) + 120)
    script = f"""
set terminal pngcairo noenhanced size 900,{height} font ",9"
set output "{path}"
set title "{safe_title}"
set style fill solid 0.8 border -1
set xlabel "images/s (higher is better)"
set xrange [0:{top}]
set yrange [{len(rows) - 0.5}:-0.5]
set ytics nomirror
set grid xtics
unset key
plot "{data}" using ($3*0.5):1:($3*0.5):(0.35):ytic(2) with boxxyerror lc rgb "#4477aa", \\
     "" using 3:1:4 with labels left offset 0.5,0
"""
    subprocess.run([gnuplot], input=script, text=True, check=True)
    os.remove(data)
    return "gnuplot"


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    args.starpu_home = os.path.abspath(args.starpu_home or os.path.join(args.out, "starpu-home"))
    os.makedirs(args.starpu_home, exist_ok=True)
    if not os.path.exists(args.train):
        sys.exit(f"compare_schedulers: no train program at {args.train} (see --train)")
    policies = list_policies(args) if args.policies == "all" else \
        [p.strip() for p in args.policies.split(",") if p.strip()]
    print(f"{len(policies)} policies, {args.steps} steps of {args.network} on {args.data}, "
          f"batch {args.batch}, plan {args.plan}", file=sys.stderr)
    if args.calibrate == "shared":
        _, error, wall = run_train(args, "dmda", args.steps, False, True, "calibration")
        print(f"calibration (dmda): {error or 'ok'} in {wall:.1f} s", file=sys.stderr)
    rows = []
    for policy in policies:
        if args.calibrate == "per-policy":
            _, error, _ = run_train(args, policy, args.steps, False, True, f"{policy}.calibration")
            if error:
                print(f"{policy} calibration: {error}", file=sys.stderr)
        row = record(policy, *run_train(args, policy, args.steps, True, False, policy))
        rows.append(row)
        print(f"{policy}: " + (f"{row['images_per_s']:.0f} images/s" if row["status"] == "ok"
                               else f"failed: {row['error']}"), file=sys.stderr)
    workers = next((r["workers"] for r in rows if r["workers"]), "workers unknown")
    title = (f"{args.network} on {args.data}, batch {args.batch}, {args.steps} steps, "
             f"plan {args.plan}; {workers}")
    write_csv(rows, os.path.join(args.out, "results.csv"))
    table = markdown_table(rows, f"Scheduling policies: {title}.")
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(table)
    tool = plot(rows, os.path.join(args.out, "images_per_s.png"), title)
    if tool is None:
        print("no matplotlib or gnuplot: no chart", file=sys.stderr)
    sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
