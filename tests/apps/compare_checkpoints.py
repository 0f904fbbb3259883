#!/usr/bin/env python3
"""Compares the float32 tensors of two safetensors checkpoints, decoded with the standard library
alone (8-byte header length, JSON header, raw little-endian float32 data).
    compare_checkpoints.py A B TOLERANCE [same|differ]
same (the default): exits 0 when every tensor has the same names and shapes and every element
differs by at most TOLERANCE * max(1, |a|); differ: exits 0 when some element differs by more.
Prints the largest difference either way.
"""
import array
import json
import struct
import sys


def read_tensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    data = blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        values = array.array("f")
        values.frombytes(data[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        tensors[name] = (info["shape"], values)
    return tensors


def main():
    a_path, b_path, tolerance = sys.argv[1], sys.argv[2], float(sys.argv[3])
    expect = sys.argv[4] if len(sys.argv) > 4 else "same"
    a, b = read_tensors(a_path), read_tensors(b_path)
    if sorted(a) != sorted(b):
        print(f"different tensors: {sorted(a)} against {sorted(b)}")
        return 1
    worst, worst_name = 0.0, ""
    for name, (shape, values) in a.items():
        if shape != b[name][0]:
            print(f"{name}: shape {shape} against {b[name][0]}")
            return 1
        for x, y in zip(values, b[name][1]):
            excess = abs(x - y) / max(1.0, abs(x))
            if excess > worst:
                worst, worst_name = excess, name
    print(f"largest relative difference {worst:.3g} (in {worst_name or '-'}), tolerance {tolerance:g}")
    within = worst <= tolerance
    return 0 if within == (expect == "same") else 1


if __name__ == "__main__":
    sys.exit(main())
