"""`--auto-cast-type` (neuronx-cc's option of that name): the matrix products of fp32 models
computed in fp8_e4m3, fp16 or tf32 instead of bf16, checked against float64 products of operands
rounded to that type by an independent numpy rounding."""
import numpy as np
import pytest
import torch

import trnsim


def round_fp8_e4m3(x):
    """x rounded to nearest even in Trainium's fp8_e4m3: 1-4-3, exponent bias 7, IEEE-like (so
    the largest finite value is 240 and the smallest subnormal 2^-9)."""
    x = np.asarray(x, dtype=np.float64)
    _, e = np.frexp(np.abs(x))
    exponent = np.maximum(e - 1, -6)  # |x| in [2^E, 2^(E+1)); subnormals share the quantum of 2^-6
    quantum = np.ldexp(1.0, exponent - 3)
    rounded = np.round(np.abs(x) / quantum) * quantum  # numpy rounds halves to even
    return np.sign(x) * np.where(rounded > 240, np.inf, rounded)


def test_the_fp8_rounding_of_this_test_matches_the_format():
    # Exact values stay, halves go to the even neighbour, and the quantum grows with the binade.
    assert list(round_fp8_e4m3([1.0, 1.0625, 1.1875, 240.0, 2.0 ** -9, 3 * 2.0 ** -11])) == [
        1.0, 1.0, 1.25, 240.0, 2.0 ** -9, 2.0 ** -9]


def _max_error(got, want):
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - want)))


def test_fp8_auto_cast_rounds_a_linear_layers_operands_once():
    torch.manual_seed(31)
    module = torch.nn.Linear(256, 384)
    x = torch.randn(64, 256)
    traced = trnsim.trace(module, x, auto_cast="matmult", auto_cast_type="fp8_e4m3")
    got = traced(x).numpy()
    w = module.weight.detach().numpy().astype(np.float64)
    b = module.bias.detach().numpy().astype(np.float64)
    want = round_fp8_e4m3(x.numpy()) @ round_fp8_e4m3(w).T + b
    exact = x.numpy().astype(np.float64) @ w.T + b
    # Products of two fp8 values are exact in fp32, so only the fp32 sums of 256 terms (of order
    # 0.1) differ from float64: far below fp8's own error, which is of the order of 2^-4 of each
    # term and so a few hundredths of the outputs.
    assert _max_error(got, want) < 1e-5
    assert _max_error(got, exact) > 1e-2


def test_fp8_auto_cast_rounds_batched_products_once():
    class Scores(torch.nn.Module):
        def forward(self, a, b):
            return torch.matmul(a, b)

    torch.manual_seed(32)
    a, b = torch.randn(2, 3, 40, 200), torch.randn(2, 3, 200, 50)
    traced = trnsim.trace(Scores(), (a, b), auto_cast="matmult", auto_cast_type="fp8")
    got = traced(a, b).numpy()
    want = round_fp8_e4m3(a.numpy()) @ round_fp8_e4m3(b.numpy())
    # Sums of 200 terms of order 1 in fp32 (the two K tiles of 128 and 72 accumulate in PSUM).
    assert _max_error(got, want) < 1e-4
    assert _max_error(got, a.numpy().astype(np.float64) @ b.numpy()) > 0.1


def round_tf32(x):
    """x rounded to nearest even at tf32's 10 stored mantissa bits (fp32's range)."""
    x = np.asarray(x, dtype=np.float64)
    _, e = np.frexp(np.abs(x))
    quantum = np.ldexp(1.0, e - 11)
    return np.sign(x) * np.round(np.abs(x) / quantum) * quantum


@pytest.mark.parametrize("cast_type,rounding", [
    ("fp16", lambda a: np.asarray(a).astype(np.float16).astype(np.float64)),
    ("tf32", round_tf32)])
def test_16_and_19_bit_auto_casts_round_a_linear_layers_operands_once(cast_type, rounding):
    torch.manual_seed(34)
    module = torch.nn.Linear(192, 160)
    x = torch.randn(48, 192)
    traced = trnsim.trace(module, x, auto_cast="matmult", auto_cast_type=cast_type)
    got = traced(x).numpy()
    w = module.weight.detach().numpy().astype(np.float64)
    b = module.bias.detach().numpy().astype(np.float64)
    want = rounding(x.numpy()) @ rounding(w).T + b
    exact = x.numpy().astype(np.float64) @ w.T + b
    # Two operands of 11 significant bits multiply exactly in fp32; the sums of 192 terms of order
    # 0.1 are fp32's. The type's own error (2^-11 of each term) is an order of magnitude larger.
    assert _max_error(got, want) < 1e-5
    assert _max_error(got, exact) > 1e-4


def test_unsupported_auto_cast_types_are_refused():
    module = torch.nn.Linear(16, 8)
    x = torch.randn(4, 16)
    with pytest.raises(trnsim.Error, match="all computes in bf16 here, not fp16"):
        trnsim.trace(module, x, auto_cast="all", auto_cast_type="fp16")
    with pytest.raises(trnsim.Error, match="expected bf16, fp16, tf32 or fp8_e4m3"):
        trnsim.trace(module, x, auto_cast="matmult", auto_cast_type="int8")
