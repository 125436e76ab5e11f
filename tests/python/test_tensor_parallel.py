"""Tensor parallelism (``trnsim.trace(..., tp=N)``, docs/compiler.md): a Llama-style decoder layer
sharded over 2 and 4 chips of a trn2 instance, a rank per chip on one core or on an LNC=2 pair (column-parallel Q, K, V, gate and up projections,
attention on each chip's heads, row-parallel output and down projections each followed by an
all-reduce), checked against PyTorch's own CPU output."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import trnsim

sys.path.insert(0, os.path.join(os.environ.get("TRN_SOURCE_DIR", "."), "scripts"))
import torch_reference_models as models  # noqa: E402

# fp32 throughout, as in test_models.py; the all-reduce sums each output's partial sums in
# another order than one chip's product does, which moves results by an ulp or so.
TOLERANCE = 1e-4
TOKENS, D, HEADS, BATCH = 24, 64, 8, 2
SOURCE = os.environ.get("TRN_SOURCE_DIR", ".")
BUILD = os.environ.get("TRN_BUILD_DIR")
TRNSIM = os.path.join(BUILD, "tools", "trnsim", "trnsim") if BUILD else None


def _llama_layer(kv_heads, layers=1):
    torch.manual_seed(7)
    module = models.Llama(layers=layers, d=D, heads=HEADS, kv_heads=kv_heads, ff=96)
    cos, sin = models.rotary_tables(TOKENS, D // HEADS)
    return module, (torch.randn(BATCH, TOKENS, D), cos, sin, models.causal_mask(TOKENS))


@pytest.mark.parametrize("tp,lnc", [(2, 1), (4, 1), (2, 2), (4, 2)])
def test_a_llama_layer_on_tp_chips_matches_pytorch(tp, lnc):
    # At lnc=2 each rank is the two cores of a logical core: every node split over the pair, the
    # all-reduce the first core's.
    module, inputs = _llama_layer(kv_heads=4)
    traced = trnsim.trace(module, inputs, tp=tp, lnc=lnc)
    assert traced.tp == tp
    got = traced(*inputs)
    with torch.no_grad():
        want = module(*inputs)
    assert got.shape == want.shape
    assert torch.max(torch.abs(got - want)).item() < TOLERANCE
    # Megatron's two all-reduces per layer (attention output, MLP down projection), each of the
    # [2, 24, 64] fp32 hidden states: 2 * 24 * 64 * 4 = 12288 bytes.
    reduces = [c for c in traced.collectives if c["op"] == "all_reduce"]
    assert [c["bytes"] for c in reduces] == [BATCH * TOKENS * D * 4] * 2
    assert all(c["us"] > 0 for c in reduces)


def test_repeated_layers_run_as_one_kernel_per_layer_on_every_chip():
    # Two layers: a kernel per layer (the same kernel twice) and one for the final norm, each a
    # run over the two chips, the hidden states handed from one to the next per chip.
    module, inputs = _llama_layer(kv_heads=4, layers=2)
    traced = trnsim.trace(module, inputs, tp=2)
    assert [name for name, _, _ in traced.kernels] == ["layers.0", "layers.1", "norm"]
    got = traced(*inputs)
    with torch.no_grad():
        want = module(*inputs)
    assert torch.max(torch.abs(got - want)).item() < TOLERANCE
    assert len([c for c in traced.collectives if c["op"] == "all_reduce"]) == 4


def test_key_value_heads_that_do_not_divide_over_the_chips_are_an_error():
    module, inputs = _llama_layer(kv_heads=2)
    with pytest.raises(trnsim.Error, match="tensor parallelism over 4 ranks"):
        trnsim.trace(module, inputs, tp=4)


@pytest.mark.skipif(TRNSIM is None or not os.path.exists(TRNSIM),
                    reason="TRN_BUILD_DIR names the build with the trnsim program")
def test_graph_run_tp_matches_pytorch_and_lists_the_all_reduces(tmp_path):
    models_dir = os.path.join(SOURCE, "tests", "graph", "models")
    model = os.path.join(models_dir, "torch_block.onnx")
    shown = subprocess.run([TRNSIM, "graph", "show", model, "--dim", "batch=2", "--tp", "2",
                            "--dump-after", "shard"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "tensor parallel over 2 ranks" in shown.stdout
    assert shown.stdout.count("= trn.AllReduce(") == 2
    assert "split(1)/2 = trn.FlashAttention(" in shown.stdout
    ran = subprocess.run([TRNSIM, "graph", "run", model, "--dim", "batch=2", "--tp", "2",
                          "--system", "trn2.48xlarge", "--input",
                          "x=" + os.path.join(models_dir, "torch_block.x.npy"),
                          "--output-dir", str(tmp_path)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    # Two all-reduces of the [2, 8, 16] fp32 hidden states: 2 * 8 * 16 * 4 = 1024 bytes each.
    assert "2 x all_reduce of 1024 bytes" in ran.stdout
    got = np.load(tmp_path / "y.npy")
    want = np.load(os.path.join(models_dir, "torch_block.y.npy"))
    assert np.max(np.abs(got - want)) < 1e-5
    # On LNC=2 logical cores: the same all-reduces, the same output, each rank on two cores.
    lnc = subprocess.run([TRNSIM, "graph", "run", model, "--dim", "batch=2", "--tp", "2",
                          "--lnc", "2", "--system", "trn2.48xlarge", "--input",
                          "x=" + os.path.join(models_dir, "torch_block.x.npy"),
                          "--output-dir", str(tmp_path / "lnc2")], capture_output=True, text=True)
    assert lnc.returncode == 0, lnc.stderr
    assert "2 x all_reduce of 1024 bytes" in lnc.stdout
    assert "chip summary: trn2, 2 cores" in lnc.stdout
    got = np.load(tmp_path / "lnc2" / "y.npy")
    assert np.max(np.abs(got - want)) < 1e-5
