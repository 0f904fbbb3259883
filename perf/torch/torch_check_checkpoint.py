#!/usr/bin/env python3
"""Loads a starcnn lenet checkpoint into a PyTorch model and evaluates it on the MNIST test set.

An independent check of starcnn's checkpoints and preprocessing: the safetensors file is decoded
with the standard library alone (8-byte header length, JSON header, raw float32 data), the model
is PyTorch's own lenet, and the preprocessing is read from the checkpoint's metadata.
    python3 perf/torch/torch_check_checkpoint.py CHECKPOINT [DATA_DIR]
"""
import json
import struct
import sys

import torch
import torch.nn.functional as F

from torch_nets import LeNet


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32)
        tensors[name] = t.reshape(info["shape"])
    return tensors, meta


def read_idx(path):
    with open(path, "rb") as f:
        blob = f.read()
    magic, count = struct.unpack(">II", blob[:8])
    if magic == 2051:
        rows, cols = struct.unpack(">II", blob[8:16])
        return torch.frombuffer(bytearray(blob[16:]), dtype=torch.uint8).reshape(count, rows, cols)
    return torch.frombuffer(bytearray(blob[8:]), dtype=torch.uint8).long()


def main():
    path = sys.argv[1]
    data_dir = sys.argv[2] if len(sys.argv) > 2 else "data/mnist"
    tensors, meta = read_safetensors(path)
    pre = json.loads(meta["preprocess"])
    state = {k: v for k, v in tensors.items() if not k.startswith("optimizer.")}
    model = LeNet(tensors["conv1.weight"].shape[1])
    model.load_state_dict(state)
    images = read_idx(f"{data_dir}/t10k-images-idx3-ubyte").float() / 255.0
    labels = read_idx(f"{data_dir}/t10k-labels-idx1-ubyte")
    x = F.pad(images[:, None], [pre["pad"]] * 4)
    x = (x - pre["mean"][0]) / pre["std"][0]
    with torch.no_grad():
        logits = model(x)
    loss = F.cross_entropy(logits, labels).item()
    accuracy = (logits.argmax(1) == labels).float().mean().item()
    print(json.dumps({"checkpoint": path, "step": meta.get("step"), "torch_test_loss": loss,
                      "torch_test_accuracy": accuracy}))


if __name__ == "__main__":
    main()
