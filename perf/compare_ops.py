#!/usr/bin/env python3
"""Side by side: starcnn's op times (perf/op_benchmark) against PyTorch's (perf/torch/torch_ops.py).

Joins the two JSON-lines files on (device, batch, layer, op) and prints a Markdown table with
both times in microseconds and the ratio starcnn / pytorch (above 1: starcnn is slower):
    build/perf/op_benchmark > starcnn.jsonl
    python3 perf/torch/torch_ops.py > torch.jsonl
    python3 perf/compare_ops.py starcnn.jsonl torch.jsonl [--csv compare.csv]
Ops found in one file only are listed with "-" for the other. Lines that are not JSON objects
(comments, StarPU's messages) are skipped. Standard library only.
"""
import argparse
import csv
import sys

from json_lines import json_lines

KEY = ("device", "batch", "layer", "op")
COLUMNS = ["device", "batch", "layer", "op", "starcnn_us", "starcnn_kernel_us", "starcnn_exec_us",
           "pytorch_us", "ratio"]


def read_rows(path, engine):
    """{key: row} of the JSON lines of `engine` in `path`."""
    rows = {}
    for number, row in json_lines(path, "compare_ops"):
        if row.get("engine") != engine:
            continue
        missing = [field for field in KEY + ("us_per_call",) if field not in row]
        if missing:
            sys.exit(f"compare_ops: {path}:{number}: no {', '.join(missing)}")
        rows[tuple(row[field] for field in KEY)] = row
    if not rows:
        sys.exit(f"compare_ops: {path}: no {engine} rows")
    return rows


def joined(starcnn, pytorch):
    """One dict per key of either file, in starcnn's order then pytorch's leftovers."""
    keys = list(starcnn) + [key for key in pytorch if key not in starcnn]
    out = []
    for key in keys:
        ours, theirs = starcnn.get(key, {}), pytorch.get(key, {})
        row = dict(zip(KEY, key))
        row["starcnn_us"] = ours.get("us_per_call")
        row["starcnn_kernel_us"] = ours.get("kernel_us")
        row["starcnn_exec_us"] = ours.get("exec_us")
        row["pytorch_us"] = theirs.get("us_per_call")
        both = row["starcnn_us"] is not None and row["pytorch_us"]
        row["ratio"] = round(row["starcnn_us"] / row["pytorch_us"], 2) if both else None
        out.append(row)
    return out


def cell(value, digits=1):
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def markdown(rows):
    head = ["device", "batch", "layer", "op", "starcnn us", "kernel us", "exec us", "pytorch us",
            "starcnn/pytorch"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 3 + "---|" + "---:|" * 5]
    for r in rows:
        values = [r["device"], str(r["batch"]), r["layer"], r["op"], cell(r["starcnn_us"]),
                  cell(r["starcnn_kernel_us"]), cell(r["starcnn_exec_us"]), cell(r["pytorch_us"]),
                  cell(r["ratio"], 2)]
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("starcnn", help="JSON lines of perf/op_benchmark")
    parser.add_argument("pytorch", help="JSON lines of perf/torch/torch_ops.py")
    parser.add_argument("--csv", metavar="PATH", help="also write the joined table as CSV")
    args = parser.parse_args()
    try:
        rows = joined(read_rows(args.starcnn, "starcnn"), read_rows(args.pytorch, "pytorch"))
    except OSError as error:
        sys.exit(f"compare_ops: {error}")
    print(markdown(rows))
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
