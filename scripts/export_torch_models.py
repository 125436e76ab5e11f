#!/usr/bin/python3
"""Exports small PyTorch models to ONNX for tests/graph/models/ with Debian's python3-torch
(1.13): a pre-norm transformer block (multi-head attention and a GELU MLP, with a dynamic batch
dimension, so the exporter builds the reshape targets with Shape/Gather/Unsqueeze/Concat), two
such blocks in an nn.Sequential (a model whose layers repeat: "/0/...", "/1/...") and a small CNN
(conv, batch norm, relu, max pool, adaptive average pool, linear).

Beside each model it saves the example input and PyTorch's own CPU output for it, NAME.x.npy and
NAME.y.npy (float32), the reference the compiled model's outputs are checked against.

Run: /usr/bin/python3 scripts/export_torch_models.py. The models are committed; rerun only to
change them. Weights come from a fixed seed.
"""
import math
import os

import numpy as np
import torch
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "graph", "models")


class Block(nn.Module):
    def __init__(self, d=16, heads=4, ff=32):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, ff)
        self.down = nn.Linear(ff, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).split(d, dim=-1)
        q = q.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        k = k.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        v = v.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        return x + self.down(nn.functional.gelu(self.up(self.ln2(x))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def export(model, example, name, dynamic_axes=None):
    model.eval()
    torch.onnx.export(model, example, os.path.join(OUT, name), input_names=["x"],
                      output_names=["y"], opset_version=17, dynamic_axes=dynamic_axes)
    stem = os.path.join(OUT, name[:-len(".onnx")])
    with torch.no_grad():
        np.save(stem + ".x.npy", example.numpy())
        np.save(stem + ".y.npy", model(example).numpy())


if __name__ == "__main__":
    torch.manual_seed(19)
    os.makedirs(OUT, exist_ok=True)
    export(Block(), torch.randn(2, 8, 16), "torch_block.onnx", {"x": {0: "batch"}, "y": {0: "batch"}})
    export(Cnn(), torch.randn(1, 3, 32, 32), "torch_cnn.onnx")
    export(nn.Sequential(Block(), Block()), torch.randn(2, 8, 16), "torch_stack.onnx",
           {"x": {0: "batch"}, "y": {0: "batch"}})
