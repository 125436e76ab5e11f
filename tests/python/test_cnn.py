"""Convolution networks through trnsim.trace: torchvision's ResNet-18 (random weights and batch-norm
statistics from a fixed seed, eval mode, nothing downloaded) and PyTorch's pooling variants,
compiled by the graph compiler and run on a simulated trn2 core, against PyTorch on the CPU.

Tolerances: both PyTorch's CPU run and the simulated chip compute in fp32, each differing from
the exact result by its own rounding (sums of up to 512 x 3 x 3 = 4608 products per output, in
different orders). The exact result is PyTorch's float64 run of the same module; the chip's
largest deviation from it must be within 4x PyTorch's own fp32 deviation (plus 1e-6 of the
outputs' scale, for outputs PyTorch happens to round exactly), and hence the chip is within
5x PyTorch's deviation of PyTorch's fp32 output."""
import time

import torch
import torchvision
from torch import nn

import trnsim


def _randomize_batch_norms(module, generator):
    """Non-trivial running statistics and affine parameters, so that the folded convolutions
    differ from the raw ones."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=generator) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=generator) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=generator) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=generator) * 0.1)


def _check_against_float64(module, x, traced):
    got = traced(x)
    with torch.no_grad():
        want32 = module(x)
        want64 = module.double()(x.double())
        module.float()
    assert got.shape == want32.shape
    scale = want64.abs().max().item()
    torch_error = (want32.double() - want64).abs().max().item()
    chip_error = (got.double() - want64).abs().max().item()
    assert chip_error <= 4 * torch_error + 1e-6 * scale, (chip_error, torch_error, scale)
    assert (got - want32).abs().max().item() <= 5 * torch_error + 1e-6 * scale
    return chip_error, torch_error


def test_resnet18_matches_pytorch():
    torch.manual_seed(18)
    module = torchvision.models.resnet18(weights=None)
    _randomize_batch_norms(module, torch.Generator().manual_seed(19))
    module.eval()
    x = torch.randn(1, 3, 64, 64)
    start = time.perf_counter()
    traced = trnsim.trace(module, x, mode="functional-only")
    ways = [how for _, how in traced.nodes]
    # The exporter folds each batch norm into its convolution: 20 convolutions (17 3x3 and 7x7,
    # 3 1x1 downsamples), the stem's max pool, the global average pool and the classifier.
    assert ways.count("implicit GEMM (PSUM taps)") == 20
    assert "window reduce (strided SBUF view)" in ways
    assert "row reduce" in ways
    chip_error, torch_error = _check_against_float64(module, x, traced)
    print(f"resnet18 1x3x64x64: host {time.perf_counter() - start:.1f} s, largest error against "
          f"float64 {chip_error:.2e} (PyTorch fp32: {torch_error:.2e})")


class Pools(nn.Module):
    """PyTorch's pooling options as exported to ONNX: padding not counted with ceil_mode, a
    strided max pool with ceil_mode, an average pool without padding, and a grouped 1-D
    convolution. (PyTorch 1.13 exports any count_include_pad=True average pool with an explicit
    Pad node, which the graph compiler does not support; tests/graph/conv_test.cpp checks
    ONNX's own count_include_pad.)"""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 5, stride=2, padding=2, dilation=1)
        self.avg_excluded = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                         count_include_pad=False)
        self.avg_unpadded = nn.AvgPool2d(2, stride=3, count_include_pad=False)
        self.max = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.conv1d = nn.Conv1d(8, 4, 3, padding=1, groups=4)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        a = self.avg_excluded(h)
        b = self.avg_unpadded(h)
        m = self.max(h)
        return torch.cat([a.flatten(1), b.flatten(1), m.flatten(1),
                          self.conv1d(h.flatten(2)).flatten(1)], dim=1)


def test_pooling_options_match_pytorch():
    torch.manual_seed(5)
    module = Pools().eval()
    x = torch.randn(2, 3, 21, 19)
    traced = trnsim.trace(module, x, mode="functional-only")
    _check_against_float64(module, x, traced)
