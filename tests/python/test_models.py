"""Whole decoder models from scripts/torch_reference_models.py, traced and run on a simulated
trn2 core, checked against PyTorch's own CPU outputs; and their timing-only runs, per layer."""
import copy
import os
import sys

import pytest
import torch

import trnsim

sys.path.insert(0, os.path.join(os.environ.get("TRN_SOURCE_DIR", "."), "scripts"))
import torch_reference_models as models  # noqa: E402

# fp32 throughout: each output is a few dozen fp32 operations deep per layer, with sums of up to
# a few hundred terms; values are of order 1 (the Llama outputs after the final RMSNorm, the
# GPT-2 log-probabilities of order log(vocab)), so a few ulps per operation and layer stay
# well under 1e-4.
TOLERANCE = 1e-4


def _max_error(got, want):
    return torch.max(torch.abs(got - want)).item()


def _small_llama(seed, layers):
    """The reference Llama at 24 tokens, hidden 64, 8 query and 2 key/value heads, and its inputs
    (a batch of 2, rotary tables, the causal mask)."""
    torch.manual_seed(seed)
    tokens, d, heads = 24, 64, 8
    module = models.Llama(layers=layers, d=d, heads=heads, kv_heads=2, ff=96)
    cos, sin = models.rotary_tables(tokens, d // heads)
    return module, (torch.randn(2, tokens, d), cos, sin, models.causal_mask(tokens))


def test_llama_decoder_with_grouped_query_attention_matches_pytorch():
    module, inputs = _small_llama(3, layers=2)
    traced = trnsim.trace(module, inputs)
    got = traced(*inputs)
    with torch.no_grad():
        want = module(*inputs)
    assert got.shape == want.shape
    assert _max_error(got, want) < TOLERANCE
    # The attention of each layer is one flash-attention node (the fuse-attention pass), which
    # reads the 2 key/value heads themselves: each of the 8 query heads reads one of them.
    assert sum(how == "library flash attention" for _, how in traced.nodes) == 2
    assert not any(name.endswith("Expand") for name, _ in traced.nodes)


def test_repeated_layers_compile_once_and_compute_what_one_kernel_computes():
    module, inputs = _small_llama(4, layers=3)
    split = trnsim.trace(module, inputs)
    whole = trnsim.trace(module, inputs, partition="one")
    # Three decoder layers sharing one compiled kernel, then the final norm's own.
    assert [(name, kernel) for name, kernel, _ in split.kernels] == [
        ("layers.0", 0), ("layers.1", 0), ("layers.2", 0), ("norm", 1)]
    assert len(whole.kernels) == 1
    assert split.instructions == whole.instructions
    got = split(*inputs)
    assert torch.equal(got, whole(*inputs))
    with torch.no_grad():
        assert _max_error(got, module(*inputs)) < TOLERANCE


def test_gpt2_decoder_with_boolean_mask_and_tied_head_matches_pytorch():
    torch.manual_seed(5)
    module = models.Gpt2(vocab=96, context=32, d=32, heads=4, layers=2)
    tokens = torch.randint(0, 96, (2, 20))
    traced = trnsim.trace(module, tokens)
    got = traced(tokens)
    with torch.no_grad():
        want = module(tokens)
    assert got.shape == (2, 20, 96)
    assert _max_error(got, want) < TOLERANCE
    # The causal Where is the flash-attention kernel's causal flag (the fuse-attention pass).
    lowered = dict(traced.nodes)
    assert any(name.endswith("FlashAttention") for name in lowered)
    # Causality: a changed last token leaves every earlier position's log-probabilities alone.
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 96
    assert torch.equal(traced(changed)[:, :-1], got[:, :-1])


def test_timing_only_run_reports_every_layer():
    torch.manual_seed(7)
    tokens = 128
    module = models.Llama(layers=3, d=128, heads=4, kv_heads=2, ff=256)
    cos, sin = models.rotary_tables(tokens, 32)
    inputs = (torch.randn(1, tokens, 128), cos, sin, models.causal_mask(tokens))
    traced = trnsim.trace(module, inputs, mode="timing-only")
    traced(*inputs)
    layers = {row["layer"]: row for row in traced.layers}
    assert list(layers) == ["layers.0", "layers.1", "layers.2", "norm"]
    # The three decoder layers are the same computation on the same shapes: the same nodes and
    # instructions each, run one after the other (a layer reads what the previous one wrote).
    decoder = [layers[f"layers.{i}"] for i in range(3)]
    assert len({(l["nodes"], l["instructions"]) for l in decoder}) == 1
    assert decoder[0]["instructions"] > 0
    for earlier, later in zip(decoder, decoder[1:]):
        assert earlier["first_us"] < later["first_us"] and earlier["last_us"] <= later["last_us"]
    assert layers["norm"]["last_us"] <= traced.last_report.time_us + 1e-6
    # The layers' engine and DMA time add up to what the report counts over the whole run.
    assert sum(l["instructions"] for l in layers.values()) == traced.instructions


def test_auto_cast_computes_the_products_in_bf16():
    torch.manual_seed(11)
    tokens, d, heads = 32, 64, 4
    module = models.Llama(layers=1, d=d, heads=heads, kv_heads=2, ff=128)
    cos, sin = models.rotary_tables(tokens, d // heads)
    inputs = (torch.randn(1, tokens, d), cos, sin, models.causal_mask(tokens))
    fp32 = trnsim.trace(module, inputs)
    bf16 = trnsim.trace(module, inputs, auto_cast="matmult")
    with torch.no_grad():
        want = module(*inputs)
    exact, cast = fp32(*inputs), bf16(*inputs)
    # bf16 operands carry 8 bits: each product term is off by up to 2^-8 relative, and the
    # outputs (after the final RMSNorm, of order 1) by a few hundredths; fp32 stays near 1e-5.
    assert _max_error(exact, want) < TOLERANCE
    assert 1e-3 < _max_error(cast, want) < 0.1
    with pytest.raises(ValueError, match="auto_cast"):
        trnsim.trace(module, inputs, auto_cast="fp8")


def test_auto_cast_all_computes_everything_in_bf16():
    torch.manual_seed(12)
    module = models.Gpt2(vocab=96, context=32, d=32, heads=4, layers=2)
    tokens = torch.randint(0, 96, (2, 20))
    traced = trnsim.trace(module, tokens, auto_cast="all")
    got = traced(tokens)
    with torch.no_grad():
        want = module(tokens)
        in_bf16 = copy.deepcopy(module).to(torch.bfloat16)(tokens).float()
    # Every value is rounded to bf16 (8 significant bits) after each node, as PyTorch's own bf16
    # run rounds it (log-probabilities up to ~47 in magnitude: a bf16 ulp there is 0.25); the
    # error is of the size of PyTorch's own bf16 error, not fp32's.
    assert got.dtype == torch.float32 and got.shape == want.shape
    assert 1e-3 < _max_error(got, want) < 1.5 * _max_error(in_bf16, want)
    # The model's own fp32 interface stays: only the casts on entry and exit were added.
    names = [name for name, _ in traced.nodes]
    assert names[-1].startswith("/auto_cast/")


def test_auto_cast_speeds_up_a_compute_heavy_layer():
    # bf16 operands stream through the tensor engine in one pass where fp32 takes four, and the
    # weights are stored in bf16; but this layer (1 x 512 tokens, hidden 1024) waits mostly on
    # DMA latency of small descriptors: 10 % faster, not 4x.
    torch.manual_seed(13)
    tokens, d = 512, 1024
    module = models.Llama(layers=1, d=d, heads=8, kv_heads=2, ff=2048)
    cos, sin = models.rotary_tables(tokens, d // 8)
    inputs = (torch.randn(1, tokens, d), cos, sin, models.causal_mask(tokens))
    times = {}
    for cast in ("none", "matmult", "all"):
        traced = trnsim.trace(module, inputs, mode="timing-only", auto_cast=cast)
        traced(*inputs)
        times[cast] = traced.last_report.time_us
    assert times["matmult"] < 0.95 * times["none"], times
    # Everything in bf16 halves the bytes every node moves as well; the layer still waits mostly
    # on DMA latency, so that gains about 10 % (0.88 of matmult's time, 0.90 since a ring's loads
    # share one DMA queue, 2026-12-03, which sped up the fp32 run more).
    assert times["all"] < 0.95 * times["matmult"], times


class LastToken(torch.nn.Module):
    """The next-token log-probabilities only, as generation reads them: x[:, -1] exports as a
    Gather with a known index along the sequence axis."""

    def __init__(self):
        super().__init__()
        self.model = models.Gpt2(vocab=64, context=16, d=32, heads=4, layers=1)

    def forward(self, tokens):
        return self.model(tokens)[:, -1]


def test_a_gather_of_known_indices_along_any_axis_matches_pytorch():
    torch.manual_seed(17)
    module = LastToken()
    tokens = torch.randint(0, 64, (3, 16))
    traced = trnsim.trace(module, tokens)
    assert "tile loop (known indices)" in [how for _, how in traced.nodes]
    got = traced(tokens)
    with torch.no_grad():
        want = module(tokens)
    assert got.shape == (3, 64)
    assert _max_error(got, want) < TOLERANCE
