#!/usr/bin/env python3
"""starcnn's own views of a StarPU trace folder (made by `train --trace DIR`), for machines
without StarVZ's R packages.

Reads DIR/tasks.rec (one recutils record per task, written by starpu_fxt_tool; times in ms) and
the PajeStartLink/PajeEndLink events of DIR/paje.trace (transfers between memory nodes), and
writes into DIR:
  gantt.png    one row per worker, tasks coloured by op kind, one row per memory node receiving
               transfers (plotted with matplotlib when importable, else gnuplot)
  summary.txt  busy and idle time of each worker over the traced window (first task start to
               last task end), time and task count per op kind and per codelet, bytes moved
               between memory nodes
and prints summary.txt.

Usage: python3 perf/trace_report.py DIR [--no-plot]
"""

import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

# Op kinds in plot order: (label, colour, test on the codelet name without its starcnn_ prefix).
KINDS = [
    ("conv forward", "#1f77b4", lambda n: n.startswith("conv2d_forward")),
    ("conv backward filter", "#ff7f0e", lambda n: n.startswith("conv2d_backward_filter")),
    ("conv backward data", "#d62728", lambda n: n.startswith("conv2d_backward_data")),
    ("merge/split", "#9467bd", lambda n: n in ("merge", "split")),
    ("relu/maxpool", "#2ca02c", lambda n: n.startswith("relu") or n.startswith("maxpool")),
    ("linear", "#17becf", lambda n: n.startswith("linear")),
    ("loss", "#e377c2", lambda n: n.startswith("softmax") or "loss" in n),
    ("update", "#bcbd22", lambda n: n.startswith("sgd")),
    ("load", "#8c564b", lambda n: n.startswith("load")),
    ("reduction/other", "#7f7f7f", lambda n: True),
]
TRANSFER_COLOUR = "#000000"


def op_kind(name):
    """The op kind label of a codelet name (starcnn_conv2d_forward -> 'conv forward')."""
    short = name[len("starcnn_"):] if name.startswith("starcnn_") else name
    for label, _, test in KINDS:
        if test(short):
            return label
    return KINDS[-1][0]


def read_rec(path):
    """Records of a recutils file as dicts of str (a field given twice keeps the last value)."""
    records, current = [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if current:
                    records.append(current)
                    current = {}
            elif line.startswith("#"):
                continue
            elif line.startswith("+") and current:  # continuation of the previous field
                key = next(reversed(current))
                current[key] += "\n" + line[1:].lstrip()
            elif ":" in line:
                key, value = line.split(":", 1)
                current[key.strip()] = value.strip()
    if current:
        records.append(current)
    return records


# A run under mpirun has workers of the same id on every rank: the key of worker w of rank r is
# r * RANK_STRIDE + w (StarPU has far fewer workers per process).
RANK_STRIDE = 10000


def worker_key(rank, worker):
    """rank None or -1: a trace of one process."""
    return max(0, int(rank or 0)) * RANK_STRIDE + int(worker)


def executed_tasks(records):
    """The tasks that ran on a worker: dicts name, worker, node, start, end (ms), kind."""
    tasks = []
    for r in records:
        if "WorkerId" not in r or "StartTime" not in r or "EndTime" not in r:
            continue  # submitted-only records (sync tasks, acquisitions) have no execution
        name = r.get("Name", "unknown")
        tasks.append({
            "name": name,
            "worker": worker_key(r.get("MPIRank", 0), r["WorkerId"]),
            "node": int(r.get("MemoryNode", -1)),
            "start": float(r["StartTime"]),
            "end": float(r["EndTime"]),
            "kind": op_kind(name),
        })
    tasks.sort(key=lambda t: t["start"])
    return tasks


def read_paje(path):
    """Worker names {id: 'CPU0'} and transfers [{src, dst, bytes, start, end, type}] of a Paje
    trace, read through its %EventDef header (PajeCreateContainer, PajeStartLink, PajeEndLink)."""
    defs, fields, current = {}, {}, None
    workers, starts, transfers = {}, {}, []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("%"):
                parts = line[1:].split()
                if parts and parts[0] == "EventDef":
                    current = parts[2]
                    defs[current] = parts[1]
                    fields[current] = []
                elif parts and parts[0] == "EndEventDef":
                    current = None
                elif parts and current is not None:
                    fields[current].append(parts[0])
                continue
            parts = line.split()
            if not parts or parts[0] not in defs:
                continue
            kind = defs[parts[0]]
            values = dict(zip(fields[parts[0]], parts[1:]))
            if kind == "PajeCreateContainer":
                # "w3", or "1_w3" for worker 3 of rank 1 in a trace of several ranks
                m = re.fullmatch(r"(?:(\d+)_)?.*?w(\d+)", values.get("Alias", ""))
                if values.get("Type") == "W" and m:
                    workers[worker_key(m.group(1), m.group(2))] = values.get("Name", "")
            elif kind in ("PajeStartLink", "PajeEndLink"):
                end = kind == "PajeEndLink"
                container = values.get("EndContainer" if end else "StartContainer", "")
                m = re.fullmatch(r".*?mm(\d+)", container)
                if not m:
                    continue  # work stealing or MPI links, not memory transfers
                key = values.get("Key", "")
                if not end:
                    starts[key] = (float(values["Time"]), int(m.group(1)), values.get("Type", ""))
                elif key in starts:
                    t0, src, link_type = starts.pop(key)
                    transfers.append({
                        "src": src,
                        "dst": int(m.group(1)),
                        "bytes": int(float(values.get("Value", "0"))),
                        "start": t0,
                        "end": float(values["Time"]),
                        "type": link_type,
                    })
    transfers.sort(key=lambda t: t["start"])
    return workers, transfers


def summarise(trace_dir, tasks, worker_names, transfers, paje_found, data_records):
    """The text of summary.txt."""
    out = [f"starcnn trace summary of {trace_dir}"]
    if not tasks:
        out.append("tasks.rec holds no executed task")
        return "\n".join(out) + "\n"
    t0 = min(t["start"] for t in tasks)
    t1 = max(t["end"] for t in tasks)
    window = t1 - t0
    workers = sorted({t["worker"] for t in tasks} | set(worker_names))
    busy = defaultdict(float)
    for t in tasks:
        busy[t["worker"]] += t["end"] - t["start"]
    total_busy = sum(busy.values())
    out.append(f"traced window: {window:.3f} ms (first task start to last task end)")
    out.append(f"tasks executed: {len(tasks)}")
    out.append("")
    out.append(f"{'worker':<12}{'busy ms':>12}{'idle ms':>12}{'busy %':>9}{'tasks':>8}")
    for w in workers:
        count = sum(1 for t in tasks if t["worker"] == w)
        frac = 100.0 * busy[w] / window if window > 0 else 0.0
        name = worker_names.get(w, f"worker{w}")
        out.append(f"{name:<12}{busy[w]:>12.3f}{window - busy[w]:>12.3f}{frac:>9.1f}{count:>8}")
    overall = 100.0 * total_busy / (window * len(workers)) if window > 0 else 0.0
    out.append(f"{'all':<12}{total_busy:>12.3f}{window * len(workers) - total_busy:>12.3f}"
               f"{overall:>9.1f}{len(tasks):>8}")
    out.append("")
    out.append(f"{'op kind':<24}{'ms':>12}{'% busy':>9}{'tasks':>8}")
    by_kind = defaultdict(lambda: [0.0, 0])
    for t in tasks:
        by_kind[t["kind"]][0] += t["end"] - t["start"]
        by_kind[t["kind"]][1] += 1
    for label, _, _ in KINDS:
        if label in by_kind:
            ms, count = by_kind[label]
            out.append(f"{label:<24}{ms:>12.3f}{100.0 * ms / total_busy:>9.1f}{count:>8}")
    out.append("")
    out.append(f"{'codelet':<36}{'ms':>12}{'tasks':>8}{'mean us':>10}")
    by_name = defaultdict(lambda: [0.0, 0])
    for t in tasks:
        by_name[t["name"]][0] += t["end"] - t["start"]
        by_name[t["name"]][1] += 1
    for name, (ms, count) in sorted(by_name.items(), key=lambda kv: -kv[1][0]):
        out.append(f"{name:<36}{ms:>12.3f}{count:>8}{1000.0 * ms / count:>10.1f}")
    out.append("")
    if not paje_found:
        out.append("transfers: not available (no paje.trace)")
    elif not transfers:
        nodes = sorted({t["node"] for t in tasks})
        out.append("transfers: none in paje.trace (" +
                   ("every worker ran on memory node 0, RAM, so nothing had to move)"
                    if nodes == [0] else "no PajeStartLink/PajeEndLink between memory nodes)"))
    else:
        out.append(f"{'transfer':<16}{'count':>8}{'MB':>12}{'ms':>12}{'GB/s':>8}")
        pairs = defaultdict(lambda: [0, 0, 0.0])
        for x in transfers:
            p = pairs[(x["src"], x["dst"])]
            p[0] += 1
            p[1] += x["bytes"]
            p[2] += x["end"] - x["start"]
        for (src, dst), (count, size, ms) in sorted(pairs.items()):
            rate = size / ms / 1e6 if ms > 0 else 0.0
            out.append(f"{f'node {src} -> {dst}':<16}{count:>8}{size / 1e6:>12.3f}{ms:>12.3f}"
                       f"{rate:>8.2f}")
        moved = sum(x["bytes"] for x in transfers)
        out.append(f"bytes moved between memory nodes: {moved} ({moved / 1e6:.3f} MB, "
                   f"{len(transfers)} transfers; node 0 is RAM)")
    if data_records is not None:
        handles = {r.get("Handle") for r in data_records}
        out.append(f"data.rec: {len(handles)} data handles described (sizes only, no transfers)")
    return "\n".join(out) + "\n"


def gantt_rows(tasks, worker_names, transfers):
    """Rows of the chart, top to bottom: [(label, kind of row, id)]."""
    workers = sorted({t["worker"] for t in tasks} | set(worker_names))
    rows = [(worker_names.get(w, f"worker{w}"), "worker", w) for w in workers]
    for node in sorted({x["dst"] for x in transfers}):
        users = sorted({worker_names.get(t["worker"], f"worker{t['worker']}") for t in tasks
                        if t["node"] == node})
        what = "RAM" if node == 0 else ",".join(users[:2]) + ("..." if len(users) > 2 else "")
        rows.append((f"to node {node}" + (f" ({what})" if what else ""), "node", node))
    return rows


def plot_matplotlib(path, tasks, rows, transfers, t0):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(figsize=(14, 1.0 + 0.5 * len(rows)))
    y_of = {(kind, ident): len(rows) - 1 - i for i, (_, kind, ident) in enumerate(rows)}
    colours = {label: colour for label, colour, _ in KINDS}
    for label, colour, _ in KINDS:
        for w in {t["worker"] for t in tasks}:
            spans = [(t["start"] - t0, t["end"] - t["start"]) for t in tasks
                     if t["kind"] == label and t["worker"] == w]
            if spans:
                ax.broken_barh(spans, (y_of[("worker", w)] - 0.4, 0.8), facecolors=colour)
    for node in {x["dst"] for x in transfers}:
        spans = [(x["start"] - t0, max(x["end"] - x["start"], 1e-3)) for x in transfers
                 if x["dst"] == node]
        ax.broken_barh(spans, (y_of[("node", node)] - 0.3, 0.6), facecolors=TRANSFER_COLOUR)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in reversed(rows)])
    ax.set_xlim(0, max(t["end"] for t in tasks) - t0)
    # The key sits below the axis, so the time unit goes into the title.
    ax.set_title("StarPU tasks per worker; time in ms since the first task")
    used = [k for k, _, _ in KINDS if any(t["kind"] == k for t in tasks)]
    handles = [Patch(color=colours[k], label=k) for k in used]
    if transfers:
        handles.append(Patch(color=TRANSFER_COLOUR, label="transfer"))
    columns = min(len(handles), 6)
    key_inches = 0.2 + 0.25 * -(-len(handles) // columns)
    fig.set_figheight(fig.get_figheight() + key_inches)
    fig.legend(handles=handles, loc="lower center", ncol=columns, fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, key_inches / fig.get_figheight(), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_gnuplot(path, tasks, rows, transfers, t0):
    base = os.path.splitext(path)[0]
    data, script = base + ".dat", base + ".gp"
    y_of = {(kind, ident): len(rows) - 1 - i for i, (_, kind, ident) in enumerate(rows)}
    plots = []
    with open(data, "w") as f:
        block = 0
        for label, colour, _ in KINDS:
            spans = [t for t in tasks if t["kind"] == label]
            if not spans:
                continue
            f.write(f"# {label}\n")
            for t in spans:
                f.write(f"{t['start'] - t0:.6f} {t['end'] - t0:.6f} {y_of[('worker', t['worker'])]}\n")
            f.write("\n\n")
            plots.append(f"'{data}' index {block} using (($1+$2)/2):3:(($2-$1)/2):(0.4) "
                         f"with boxxyerror fs solid noborder lc rgb '{colour}' title '{label}'")
            block += 1
        if transfers:
            f.write("# transfers\n")
            for x in transfers:
                f.write(f"{x['start'] - t0:.6f} {x['end'] - t0:.6f} {y_of[('node', x['dst'])]}\n")
            f.write("\n\n")
            plots.append(f"'{data}' index {block} using (($1+$2)/2):3:(($2-$1)/2):(0.3) "
                         f"with boxxyerror fs solid noborder lc rgb '{TRANSFER_COLOUR}' "
                         f"title 'transfer'")
    ytics = ", ".join(f"'{label}' {len(rows) - 1 - i}" for i, (label, _, _) in enumerate(rows))
    height = 160 + 40 * len(rows)
    with open(script, "w") as f:
        f.write(f"set terminal png size 1400,{height} font ',9'\n")
        f.write(f"set output '{path}'\n")
        # The key sits below the axis, so the time unit goes into the title.
        f.write("set title 'StarPU tasks per worker; time in ms since the first task'\n")
        f.write(f"set ytics ({ytics})\n")
        f.write(f"set yrange [-0.7:{len(rows) - 0.3}]\n")
        f.write(f"set xrange [0:{max(t['end'] for t in tasks) - t0:.6f}]\n")
        f.write("set key below horizontal\n")
        f.write("plot " + ", \\\n  ".join(plots) + "\n")
    subprocess.run(["gnuplot", script], check=True)


def plot_gantt(path, tasks, rows, transfers):
    """Writes the chart with matplotlib, else gnuplot; returns the tool used or None."""
    if not tasks:
        return None
    t0 = min(t["start"] for t in tasks)
    try:
        import matplotlib  # noqa: F401
    except Exception:  # missing, or a broken install: gnuplot instead
        if shutil.which("gnuplot"):
            plot_gnuplot(path, tasks, rows, transfers, t0)
            return "gnuplot"
        return None
    plot_matplotlib(path, tasks, rows, transfers, t0)
    return "matplotlib"


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1 or any(a not in ("--no-plot",) for a in argv[1:] if a.startswith("--")):
        print(__doc__, file=sys.stderr)
        return 2
    trace_dir = args[0]
    tasks_rec = os.path.join(trace_dir, "tasks.rec")
    if not os.path.isfile(tasks_rec):
        print(f"trace_report: no {tasks_rec} (run starpu_fxt_tool on the FxT trace first)",
              file=sys.stderr)
        return 1
    tasks = executed_tasks(read_rec(tasks_rec))
    paje = os.path.join(trace_dir, "paje.trace")
    worker_names, transfers = read_paje(paje) if os.path.isfile(paje) else ({}, [])
    data_rec = os.path.join(trace_dir, "data.rec")
    data_records = read_rec(data_rec) if os.path.isfile(data_rec) else None
    text = summarise(trace_dir, tasks, worker_names, transfers, os.path.isfile(paje), data_records)
    with open(os.path.join(trace_dir, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    if "--no-plot" not in argv:
        gantt = os.path.join(trace_dir, "gantt.png")
        tool = plot_gantt(gantt, tasks, gantt_rows(tasks, worker_names, transfers), transfers)
        if tool:
            print(f"wrote {gantt} ({tool}) and {os.path.join(trace_dir, 'summary.txt')}")
        else:
            print("no gantt.png: neither matplotlib nor gnuplot is available", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
