#!/usr/bin/python3
"""Exports torchvision's ResNet-18 (random weights from a fixed seed, eval mode, nothing
downloaded) to ONNX at opset 17 for a fixed input size, for `trnsim graph run` (docs/compiler.md,
"Convolution networks"). The file is about 45 MB of fp32 weights, so it is not committed.

Run: /usr/bin/python3 scripts/export_resnet18.py OUT.onnx [--size 224] [--batch 1]
(Debian's python3-torch and python3-torchvision).
"""
import argparse

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(18)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(args.batch, 3, args.size, args.size)
    with torch.no_grad():
        torch.onnx.export(model, x, args.out, input_names=["x"], output_names=["logits"],
                          opset_version=17)


if __name__ == "__main__":
    main()
