#!/usr/bin/env python3
"""Draws split_sweep's JSON lines: training step time against the CPU's share, one panel per
(network, batch, axis) sweep, the measured curve beside its prediction, and the `auto` plan's
measured step marked (a horizontal line labelled with the plan it chose).

    split_sweep --axis samples ... > sweep.jsonl
    python3 perf/plot_sweep.py sweep.jsonl [more.jsonl ...] --out sweep.png [--title TEXT]

Lines of other tools in the same files are ignored, so gpu-session's results.jsonl can be given
whole; `--step-prefix mps-` keeps only the lines of steps whose name starts with it.
"""
import argparse
import math
import sys

from json_lines import json_lines


def read_lines(paths, step_prefix):
    rows = []
    for path in paths:
        for _, row in json_lines(path, "plot_sweep"):
            if row.get("tool") != "split_sweep":
                continue
            if step_prefix and not str(row.get("step", "")).startswith(step_prefix):
                continue
            rows.append(row)
    return rows


def sweeps_of(rows):
    """Groups rows by (step, network, batch, axis): a sweep and the plans measured after it."""
    groups = {}
    for row in rows:
        key = (row.get("step", ""), row["network"], row["batch"], row["axis"])
        groups.setdefault(key, []).append(row)
    return groups


def share_total(rows, axis, batch):
    """The x axis's full extent: the batch (samples) or the layer's filter count (filters)."""
    if axis == "samples":
        return batch
    return max((r["cpu_share"] for r in rows if r["kind"] == "sweep"), default=1) or 1


def draw(groups, out, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted(groups)
    cols = min(3, len(keys))
    rows_n = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(5.2 * cols, 3.8 * rows_n), squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    for ax, key in zip(axes.flat, keys):
        step, network, batch, axis = key
        rows = groups[key]
        swept = sorted((r for r in rows if r["kind"] == "sweep"), key=lambda r: r["cpu_share"])
        total = share_total(rows, axis, batch)
        xs = [100.0 * r["cpu_share"] / total for r in swept]
        ax.plot(xs, [r["step_ms"] for r in swept], "o-", label="measured")
        predicted = [(x, r.get("predicted_conv_ms")) for x, r in zip(xs, swept)]
        predicted = [(x, p) for x, p in predicted if isinstance(p, (int, float)) and p > 0]
        if predicted and axis == "samples":
            ax.plot(*zip(*predicted), "x--", label="predicted from the two ends")
        for r in rows:
            if r["kind"] == "plan" and r["plan"] == "auto":
                ax.axhline(r["step_ms"], color="tab:red", linestyle=":",
                           label=f"auto: {r['step_ms']:.3f} ms")
                ax.annotate(r.get("resolved_plan", "")[:48], xy=(0.02, 0.02),
                            xycoords="axes fraction", fontsize=7, color="tab:red")
        unit = "samples of the batch" if axis == "samples" else f"filters of {rows[0]['layer']}"
        ax.set_xlabel(f"CPU share (% of {unit})")
        ax.set_ylabel("step time (ms)")
        ax.set_yscale("log")
        ax.set_title(f"{network} b{batch}, {axis}" + (f" [{step}]" if step else ""), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="JSON-lines files holding split_sweep's lines")
    p.add_argument("--out", required=True, help="PNG to write")
    p.add_argument("--title", default="")
    p.add_argument("--step-prefix", default="",
                   help="keep only gpu-session steps whose name starts with this")
    args = p.parse_args()
    try:
        rows = read_lines(args.files, args.step_prefix)
    except OSError as e:
        sys.exit(f"plot_sweep: {e}")
    if not rows:
        sys.exit("plot_sweep: no split_sweep lines in " + ", ".join(args.files))
    groups = sweeps_of(rows)
    draw(groups, args.out, args.title)
    print(f"plot_sweep: {len(groups)} sweeps drawn into {args.out}")


if __name__ == "__main__":
    main()
