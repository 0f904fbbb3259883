#!/usr/bin/env python3
"""starcnn's own views of a StarPU trace folder (made by `train --trace DIR`), for machines
without StarVZ's R packages.

Reads DIR/tasks.rec (one recutils record per task, written by starpu_fxt_tool; times in ms, with
each task's dependencies as DependsOn job ids) and DIR/paje.trace (transfers between memory nodes
as PajeStartLink/PajeEndLink, the scheduler's nsubmitted and nready counts as PajeSetVariable),
and writes into DIR:
  trace.png    one figure of panels over the traced window (first task start to last task end):
               "gantt": one row per worker, tasks coloured by op kind, and one row per memory node
               receiving transfers; "counts": submitted and ready tasks over time; "transfers":
               GB/s per link (source -> destination memory node) over time; "idle": idle % of
               each worker; "critical path": the window against the critical path (the longest
               chain of dependent tasks, at their measured durations) and the work per worker,
               the two bounds no schedule can beat (plotted with matplotlib when importable,
               else gnuplot)
  summary.txt  busy and idle time of each worker, time and task count per op kind and per
               codelet, bytes moved between memory nodes, the critical path, the task counts,
               the transfers per link, and the panels drawn ("trace.png panels: ...")
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
    # conv_block: a convolution with its ReLU (and maxpool) in one task each way.
    ("conv forward", "#1f77b4", lambda n: n.startswith(("conv2d_forward", "conv_block_forward"))),
    ("conv backward", "#ff9896", lambda n: n.startswith("conv_block_backward")),
    ("conv backward filter", "#ff7f0e", lambda n: n.startswith("conv2d_backward_filter")),
    ("conv backward data", "#d62728", lambda n: n.startswith("conv2d_backward_data")),
    ("merge/split", "#9467bd", lambda n: n in ("merge", "split")),
    ("relu/maxpool", "#2ca02c", lambda n: n.startswith("relu") or n.startswith("maxpool")),
    ("linear", "#17becf", lambda n: n.startswith("linear")),
    ("loss", "#e377c2", lambda n: n.startswith("softmax") or "loss" in n),
    ("update", "#bcbd22", lambda n: n.startswith("sgd")),
    ("load", "#8c564b", lambda n: n.startswith("load")),
    # A parked CPU worker's sleep (model/runtime/parked_workers.h): busy to StarPU, idle in fact.
    ("parked (asleep)", "#dddddd", lambda n: n.startswith("parked")),
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


def critical_path(records):
    """(ms, [job ids]) of the longest chain of dependent tasks of tasks.rec, each task weighing
    its measured duration (0 for records that did not run: syncs, acquisitions). Dependencies
    are the DependsOn job ids; a chain through an id without a record stops there."""
    weight, deps = {}, {}
    for r in records:
        if "JobId" not in r:
            continue
        job = r["JobId"]
        ran = "StartTime" in r and "EndTime" in r and "WorkerId" in r
        weight[job] = float(r["EndTime"]) - float(r["StartTime"]) if ran else 0.0
        deps[job] = [d for d in r.get("DependsOn", "").split() if d != job]
    longest, via = {}, {}
    for root in weight:  # iterative depth-first search: chains can be thousands of tasks long
        stack = [(root, False)]
        while stack:
            job, expanded = stack.pop()
            if job in longest:
                continue
            if not expanded:
                stack.append((job, True))
                stack.extend((d, False) for d in deps[job] if d in weight and d not in longest)
                continue
            best, best_dep = 0.0, None
            for d in deps[job]:  # a dependency cycle (none in a DAG) leaves d out
                if d in longest and (best_dep is None or longest[d] > best):
                    best, best_dep = longest[d], d
            longest[job], via[job] = weight[job] + best, best_dep
    if not longest:
        return 0.0, []
    job = max(longest, key=longest.get)
    total, chain = longest[job], []
    while job is not None:
        chain.append(job)
        job = via[job]
    return total, chain[::-1]


def read_paje(path):
    """Worker names {id: 'CPU0'}, transfers [{src, dst, bytes, start, end, type}] and the
    scheduler's counts {'nsubmitted': [(ms, value)], 'nready': [...]} of a Paje trace, read
    through its %EventDef header (PajeCreateContainer, PajeStartLink, PajeEndLink,
    PajeSetVariable, PajeAddVariable, PajeSubVariable)."""
    defs, fields, current = {}, {}, None
    workers, starts, transfers = {}, {}, []
    counts = {"nsubmitted": [], "nready": []}
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
            elif kind in ("PajeSetVariable", "PajeAddVariable", "PajeSubVariable"):
                series = counts.get(values.get("Type"))
                if series is None:
                    continue
                value = float(values.get("Value", "0"))
                if kind != "PajeSetVariable":
                    last = series[-1][1] if series else 0.0
                    value = last + value if kind == "PajeAddVariable" else last - value
                series.append((float(values["Time"]), value))
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
    return workers, transfers, counts


def count_at(series, t):
    """The value of a step series [(ms, value)] at time t (0 before its first point)."""
    value = 0.0
    for time, v in series:
        if time > t:
            break
        value = v
    return value


def link_rates(transfers, t0, t1, bins=60):
    """{(src, dst): ([bin start ms since t0], [GB/s])}: bytes of each transfer spread evenly
    over its duration, summed per link and per bin of the window."""
    width = (t1 - t0) / bins if t1 > t0 else 1.0
    rates = {}
    for x in transfers:
        series = rates.setdefault((x["src"], x["dst"]), [0.0] * bins)
        length = max(x["end"] - x["start"], 1e-9)
        for b in range(bins):
            lo, hi = t0 + b * width, t0 + (b + 1) * width
            overlap = min(hi, x["end"]) - max(lo, x["start"])
            if x["end"] - x["start"] <= 1e-9:  # an instant transfer: all of it in its bin
                overlap = length if lo <= x["start"] < hi else 0.0
            if overlap > 0:
                series[b] += x["bytes"] * overlap / length / width / 1e6  # bytes/ms to GB/s
    starts = [b * width for b in range(bins)]
    return {link: (starts, series) for link, series in sorted(rates.items())}


def worker_table(tasks, worker_names):
    """[(name, busy ms, tasks)] per worker, and the window (t0, t1)."""
    t0 = min(t["start"] for t in tasks)
    t1 = max(t["end"] for t in tasks)
    workers = sorted({t["worker"] for t in tasks} | set(worker_names))
    busy = defaultdict(float)
    for t in tasks:
        busy[t["worker"]] += t["end"] - t["start"]
    rows = [(worker_names.get(w, f"worker{w}"), busy[w], sum(1 for t in tasks if t["worker"] == w))
            for w in workers]
    return rows, t0, t1


def summarise(trace_dir, tasks, worker_names, transfers, paje_found, data_records, counts,
              path_ms, path_jobs):
    """The text of summary.txt (without its panels line)."""
    out = [f"starcnn trace summary of {trace_dir}"]
    if not tasks:
        out.append("tasks.rec holds no executed task")
        return "\n".join(out) + "\n"
    rows, t0, t1 = worker_table(tasks, worker_names)
    window = t1 - t0
    total_busy = sum(busy for _, busy, _ in rows)
    out.append(f"traced window: {window:.3f} ms (first task start to last task end)")
    out.append(f"tasks executed: {len(tasks)}")
    out.append("")
    out.append(f"{'worker':<12}{'busy ms':>12}{'idle ms':>12}{'busy %':>9}{'idle %':>9}"
               f"{'tasks':>8}")
    for name, busy, count in rows + [("all", total_busy, len(tasks))]:
        span = window * (len(rows) if name == "all" else 1)
        frac = 100.0 * busy / span if span > 0 else 0.0
        out.append(f"{name:<12}{busy:>12.3f}{span - busy:>12.3f}{frac:>9.1f}{100.0 - frac:>9.1f}"
                   f"{count:>8}")
    out.append("")
    work_bound = total_busy / len(rows)
    out.append(f"critical path: {path_ms:.3f} ms over {len(path_jobs)} tasks (the longest chain "
               "of dependent tasks of tasks.rec at their measured durations)")
    out.append(f"work per worker: {work_bound:.3f} ms (busy time of all workers / {len(rows)})")
    bound = max(path_ms, work_bound)
    if bound > 0:
        out.append(f"traced window: {window / bound:.2f} x the larger bound ({bound:.3f} ms)")
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
    for name, label in (("nsubmitted", "submitted"), ("nready", "ready")):
        inside = [count_at(counts[name], t0)] + [v for t, v in counts[name] if t0 <= t <= t1]
        if counts[name]:
            out.append(f"{label} tasks in the window: at most {max(inside):.0f}")
        else:
            out.append(f"{label} tasks: not available (no {name} variable in paje.trace)")
    out.append("")
    if not paje_found:
        out.append("transfers: not available (no paje.trace)")
    elif not transfers:
        nodes = sorted({t["node"] for t in tasks})
        out.append("transfers: none in paje.trace (" +
                   ("every worker ran on memory node 0, RAM, so nothing had to move)"
                    if nodes == [0] else "no PajeStartLink/PajeEndLink between memory nodes)"))
    else:
        out.append(f"{'transfer':<16}{'count':>8}{'MB':>12}{'ms':>12}{'GB/s':>8}{'peak GB/s':>11}")
        pairs = defaultdict(lambda: [0, 0, 0.0])
        for x in transfers:
            p = pairs[(x["src"], x["dst"])]
            p[0] += 1
            p[1] += x["bytes"]
            p[2] += x["end"] - x["start"]
        rates = link_rates(transfers, t0, t1)
        for (src, dst), (count, size, ms) in sorted(pairs.items()):
            rate = size / ms / 1e6 if ms > 0 else 0.0
            peak = max(rates[(src, dst)][1]) if (src, dst) in rates else 0.0
            out.append(f"{f'node {src} -> {dst}':<16}{count:>8}{size / 1e6:>12.3f}{ms:>12.3f}"
                       f"{rate:>8.2f}{peak:>11.3f}")
        moved = sum(x["bytes"] for x in transfers)
        out.append(f"bytes moved between memory nodes: {moved} ({moved / 1e6:.3f} MB, "
                   f"{len(transfers)} transfers; node 0 is RAM)")
    if data_records is not None:
        handles = {r.get("Handle") for r in data_records}
        out.append(f"data.rec: {len(handles)} data handles described (sizes only, no transfers)")
    return "\n".join(out) + "\n"


# --- the figure: panels described once, drawn by matplotlib or gnuplot ------------------------

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


def build_panels(tasks, worker_names, transfers, counts, path_ms):
    """The panels of trace.png, top to bottom, as plain data:
    {'name', 'title', 'kind': 'boxes' | 'steps' | 'bars', ...}. Times in ms since the first
    task start; panels over time have 'xmax', the window. 'boxes': rows (labels, top first) and series [(legend, colour, [(x0, x1, row,
    half height)])]; 'steps': ylabel and series [(legend, colour, xs, ys)]; 'bars': labels,
    values, colour, xlabel."""
    rows = gantt_rows(tasks, worker_names, transfers)
    table, t0, t1 = worker_table(tasks, worker_names)
    window = t1 - t0
    row_of = {(kind, ident): i for i, (_, kind, ident) in enumerate(rows)}
    gantt = []
    for label, colour, _ in KINDS:
        spans = [(t["start"] - t0, t["end"] - t0, row_of[("worker", t["worker"])], 0.4)
                 for t in tasks if t["kind"] == label]
        if spans:
            gantt.append((label, colour, spans))
    if transfers:
        gantt.append(("transfer", TRANSFER_COLOUR,
                      [(x["start"] - t0, max(x["end"], x["start"] + 1e-3) - t0,
                        row_of[("node", x["dst"])], 0.3) for x in transfers]))
    panels = [{"name": "gantt", "kind": "boxes", "rows": [r[0] for r in rows], "series": gantt,
               "xmax": window,
               "title": "StarPU tasks per worker and transfers per memory node; ms since the "
                        "first task"}]

    steps = []
    for name, legend, colour in (("nsubmitted", "submitted", "#1f77b4"),
                                 ("nready", "ready", "#d62728")):
        points = [(0.0, count_at(counts[name], t0))] + [
            (t - t0, v) for t, v in counts[name] if t0 <= t <= t1] + [
            (window, count_at(counts[name], t1))]
        if counts[name]:
            steps.append((legend, colour, [p[0] for p in points], [p[1] for p in points]))
    panels.append({"name": "counts", "kind": "steps", "series": steps, "ylabel": "tasks",
                   "xmax": window,
                   "title": "submitted and ready tasks (StarPU's scheduler counts)"
                            if steps else "submitted and ready tasks: none in paje.trace"})

    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    links = [(f"node {src} -> {dst}", palette[i % len(palette)], xs, ys)
             for i, ((src, dst), (xs, ys)) in enumerate(link_rates(transfers, t0, t1).items())]
    panels.append({"name": "transfers", "kind": "steps", "series": links, "ylabel": "GB/s",
                   "xmax": window,
                   "title": "transfers per link (node 0 is RAM)" if links else
                            "transfers per link: none (every task ran in RAM or nothing moved)"})

    panels.append({"name": "idle", "kind": "bars", "colour": "#7f7f7f", "xlabel": "idle %",
                   "labels": [name for name, _, _ in table],
                   "values": [100.0 * (window - busy) / window if window > 0 else 0.0
                              for _, busy, _ in table],
                   "title": "idle % of each worker over the window"})
    work = sum(busy for _, busy, _ in table) / len(table)
    panels.append({"name": "critical path", "kind": "bars", "colour": "#2ca02c", "xlabel": "ms",
                   "labels": ["traced window", "critical path", "work per worker"],
                   "values": [window, path_ms, work],
                   "title": "the window against its bounds: the critical path (measured task "
                            "durations) and the work per worker"})
    return panels


def panel_height(panel):
    """Relative height of a panel in the figure."""
    if panel["kind"] == "boxes":
        return 1.0 + 0.45 * len(panel["rows"])
    if panel["kind"] == "bars":
        return 0.9 + 0.3 * len(panel["labels"])
    return 2.2


def plot_matplotlib(path, panels):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heights = [panel_height(p) for p in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(14, 1.2 + sum(heights) * 0.75),
                             gridspec_kw={"height_ratios": heights})
    for ax, panel in zip(axes, panels):
        ax.set_title(panel["title"], fontsize="medium")
        if panel["kind"] == "boxes":
            n = len(panel["rows"])
            for legend, colour, spans in panel["series"]:
                for x0, x1, row, half in spans:
                    ax.broken_barh([(x0, x1 - x0)], (n - 1 - row - half, 2 * half),
                                   facecolors=colour)
                ax.plot([], [], color=colour, linewidth=6, label=legend)
            ax.set_yticks(range(n))
            ax.set_yticklabels(list(reversed(panel["rows"])))
            ax.set_ylim(-0.7, n - 0.3)
        elif panel["kind"] == "steps":
            for legend, colour, xs, ys in panel["series"]:
                ax.step(xs, ys, where="post", color=colour, label=legend)
            ax.set_ylabel(panel["ylabel"])
        else:
            ys = range(len(panel["labels"]))
            ax.barh(list(ys), panel["values"], color=panel["colour"])
            ax.set_yticks(list(ys))
            ax.set_yticklabels(panel["labels"])
            ax.invert_yaxis()
            ax.set_xlabel(panel["xlabel"])
            for y, v in zip(ys, panel["values"]):
                ax.text(v, y, f" {v:.3g}", va="center", fontsize="small")
        if "xmax" in panel:
            ax.set_xlim(0, panel["xmax"])
        if panel["kind"] != "bars" and panel["series"]:
            ax.legend(loc="upper right", fontsize="small", ncol=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_gnuplot(path, panels):
    base = os.path.splitext(path)[0]
    data, script = base + ".dat", base + ".gp"
    heights = [panel_height(p) for p in panels]
    total = sum(heights)
    lines = [f"set terminal png size 1400,{int(90 * total)} font ',9'", f"set output '{path}'",
             "set multiplot", "set lmargin 22", "set rmargin 4", "set key top right horizontal"]
    block = 0
    with open(data, "w") as f:
        top = 1.0
        for panel, height in zip(panels, heights):
            size = height / total
            top -= size
            lines += ["unset label", "set xtics autofreq; set ytics autofreq",
                      "unset xlabel; unset ylabel",
                      f"set origin 0,{top:.5f}", f"set size 1,{size:.5f}",
                      "set title '" + panel["title"].replace("'", "''") + "'",
                      "set yrange [*:*]", "set xrange [*:*]"]
            if "xmax" in panel:
                lines.append(f"set xrange [0:{panel['xmax']:.6f}]")
            plots = []
            if panel["kind"] == "boxes":
                n = len(panel["rows"])
                ytics = ", ".join(f"'{label}' {n - 1 - i}" for i, label in enumerate(panel["rows"]))
                lines += [f"set ytics ({ytics})", f"set yrange [-0.7:{n - 0.3}]"]
                for legend, colour, spans in panel["series"]:
                    for x0, x1, row, half in spans:
                        f.write(f"{(x0 + x1) / 2:.6f} {n - 1 - row} {(x1 - x0) / 2:.6f} {half}\n")
                    f.write("\n\n")
                    plots.append(f"'{data}' index {block} using 1:2:3:4 with boxxyerror fs solid "
                                 f"noborder lc rgb '{colour}' title '{legend}'")
                    block += 1
            elif panel["kind"] == "steps":
                lines.append(f"set ylabel '{panel['ylabel']}'")
                for legend, colour, xs, ys in panel["series"]:
                    for x, y in zip(xs, ys):
                        f.write(f"{x:.6f} {y:.6f}\n")
                    f.write("\n\n")
                    plots.append(f"'{data}' index {block} using 1:2 with steps lw 2 "
                                 f"lc rgb '{colour}' title '{legend}'")
                    block += 1
                if not plots:  # an empty panel keeps its place and title
                    lines.append("set yrange [0:1]")
                    plots.append("0 notitle lc rgb '#ffffff'")
            else:
                n = len(panel["labels"])
                ytics = ", ".join(f"'{label}' {n - 1 - i}"
                                  for i, label in enumerate(panel["labels"]))
                top_value = max(panel["values"] + [1e-9])
                lines += [f"set ytics ({ytics})", f"set yrange [-0.7:{n - 0.3}]",
                          f"set xrange [0:{top_value * 1.15:.6f}]",
                          f"set xlabel '{panel['xlabel']}'"]
                for i, (label, value) in enumerate(zip(panel["labels"], panel["values"])):
                    f.write(f"{value / 2:.6f} {n - 1 - i} {value / 2:.6f} 0.35\n")
                    lines.append(f"set label {i + 1} ' {value:.3g}' at {value:.6f},{n - 1 - i}")
                f.write("\n\n")
                plots.append(f"'{data}' index {block} using 1:2:3:4 with boxxyerror fs solid "
                             f"noborder lc rgb '{panel['colour']}' notitle")
                block += 1
            lines.append("plot " + ", ".join(plots))
    lines.append("unset multiplot")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["gnuplot", script], check=True)


def plot_panels(path, panels):
    """Writes the figure with matplotlib, else gnuplot; returns the tool used or None."""
    try:
        import matplotlib  # noqa: F401
    except Exception:  # missing, or a broken install: gnuplot instead
        if shutil.which("gnuplot"):
            plot_gnuplot(path, panels)
            return "gnuplot"
        return None
    plot_matplotlib(path, panels)
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
    records = read_rec(tasks_rec)
    tasks = executed_tasks(records)
    path_ms, path_jobs = critical_path(records)
    paje = os.path.join(trace_dir, "paje.trace")
    no_counts = {"nsubmitted": [], "nready": []}
    worker_names, transfers, counts = (read_paje(paje) if os.path.isfile(paje)
                                       else ({}, [], no_counts))
    data_rec = os.path.join(trace_dir, "data.rec")
    data_records = read_rec(data_rec) if os.path.isfile(data_rec) else None
    text = summarise(trace_dir, tasks, worker_names, transfers, os.path.isfile(paje), data_records,
                     counts, path_ms, path_jobs)
    figure = os.path.join(trace_dir, "trace.png")
    tool = None
    if "--no-plot" not in argv and tasks:
        panels = build_panels(tasks, worker_names, transfers, counts, path_ms)
        tool = plot_panels(figure, panels)
        if tool:
            text += "trace.png panels: " + ", ".join(p["name"] for p in panels) + "\n"
    summary = os.path.join(trace_dir, "summary.txt")
    with open(summary + ".tmp", "w") as f:
        f.write(text)
    os.replace(summary + ".tmp", summary)
    print(text, end="")
    if tool:
        print(f"wrote {figure} ({tool}) and {summary}")
    elif "--no-plot" not in argv and tasks:
        print("no trace.png: neither matplotlib nor gnuplot is available", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
