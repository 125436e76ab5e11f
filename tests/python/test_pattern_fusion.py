"""Pattern fusion on PyTorch modules (docs/compiler.md, passes fuse-linear, fuse-layer-norm,
fuse-rms-norm and fuse-rope): nn.Linear with its bias and activation becomes one trn.Linear node
lowered to the library's linear kernel with the bias and activation applied as PSUM is drained; a
LayerNorm written out becomes one LayerNormalization; Llama's RMSNorm becomes one trn.RmsNorm node
(the library's RMS norm) and its rotate_half rotary embedding one trn.Rope node (the library's
rope). The fused models still match PyTorch's CPU output, at LNC=1
and 2 and under auto-cast."""
import os
import sys

import torch
from torch import nn

import trnsim

sys.path.insert(0, os.path.join(os.environ.get("TRN_SOURCE_DIR", "."), "scripts"))
import torch_reference_models as models  # noqa: E402

# fp32 throughout, outputs of order 1: the products' fp32 rounding over at most a few hundred
# terms stays far below this (as test_models.py).
TOLERANCE = 1e-4
# How `trnsim compile` lists a fused trn.Linear: "library linear (bias and Gelu fused)", ...
LINEAR = "library linear (bias"
RMS_NORM = "library rms norm"
ROPE = "library rope"


def _lowered(traced, how):
    return [name for name, lowering in traced.nodes if lowering.startswith(how)]


class Mlp(nn.Module):
    """Linear, GELU, Linear, ReLU, Linear (no activation: the bias alone), Tanh, Linear, Sigmoid."""

    def __init__(self, d=48, hidden=160):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d),
                                    nn.ReLU(), nn.Linear(d, d), nn.Tanh(), nn.Linear(d, d),
                                    nn.Sigmoid(), nn.Linear(d, 8))

    def forward(self, x):
        return self.layers(x)


def test_linear_bias_and_activation_become_one_node_for_3d_and_2d_activations():
    torch.manual_seed(21)
    module = Mlp().eval()
    for x in (torch.randn(2, 40, 48), torch.randn(72, 48)):  # MatMul + Add, and Gemm
        traced = trnsim.trace(module, x, mode="functional-only")
        assert [how for _, how in traced.nodes] == [
            "library linear (bias and Gelu fused)", "library linear (bias and Relu fused)",
            "library linear (bias and Tanh fused)", "library linear (bias and Sigmoid fused)",
            "library linear (bias fused)"]
        with torch.no_grad():
            want = module(x)
        assert torch.max(torch.abs(traced(x) - want)).item() < TOLERANCE
        # Two cores: the kernel splits the output columns between them.
        traced2 = trnsim.trace(module, x, mode="functional-only", lnc=2)
        assert len(_lowered(traced2, LINEAR)) == 5
        assert torch.max(torch.abs(traced2(x) - want)).item() < TOLERANCE


def test_linear_under_auto_cast_matmult_rounds_operands_to_bf16_only():
    torch.manual_seed(22)
    module = nn.Sequential(nn.Linear(96, 200), nn.GELU()).eval()
    x = torch.randn(2, 30, 96)
    traced = trnsim.trace(module, x, mode="functional-only", auto_cast="matmult")
    assert len(_lowered(traced, LINEAR)) == 1 and len(traced.nodes) == 1
    # The reference: x and the weight rounded to bf16, products and sums in float64, the fp32
    # bias added and the exact GELU applied (what the kernel does, with fp32 accumulation).
    linear = module[0]
    with torch.no_grad():
        product = x.bfloat16().double() @ linear.weight.bfloat16().double().T
        want = nn.functional.gelu(product + linear.bias.double())
        exact = module(x).double()
    got = traced(x).double()
    assert torch.max(torch.abs(got - want)).item() < TOLERANCE
    # ... and not the fp32 result: the operands were rounded.
    assert torch.max(torch.abs(got - exact)).item() > 10 * TOLERANCE


def _llama(seed, layers, tokens, d, heads, kv_heads, ff):
    torch.manual_seed(seed)
    module = models.Llama(layers=layers, d=d, heads=heads, kv_heads=kv_heads, ff=ff)
    cos, sin = models.rotary_tables(tokens, d // heads)
    return module, (torch.randn(2, tokens, d), cos, sin, models.causal_mask(tokens))


def test_llama_rms_norms_and_rotary_embeddings_become_library_nodes():
    module, inputs = _llama(23, layers=2, tokens=24, d=64, heads=8, kv_heads=2, ff=96)
    traced = trnsim.trace(module, inputs, mode="functional-only")
    # Two norms per layer and the final norm; the queries' and keys' rotations per layer.
    assert len(_lowered(traced, RMS_NORM)) == 5, traced.nodes
    assert len(_lowered(traced, ROPE)) == 4, traced.nodes
    names = [name for name, _ in traced.nodes]
    assert len(set(names)) == len(names)  # the keys' rope of a layer is "/layers.i/Rope_1"
    for gone in ("ReduceMean", "Sqrt", "Pow", "Neg", "Concat"):
        assert not any(gone in name for name in names), gone
    with torch.no_grad():
        want = module(*inputs)
    assert torch.max(torch.abs(traced(*inputs) - want)).item() < TOLERANCE
    traced2 = trnsim.trace(module, inputs, mode="functional-only", lnc=2)
    assert len(_lowered(traced2, RMS_NORM)) == 5 and len(_lowered(traced2, ROPE)) == 4
    assert torch.max(torch.abs(traced2(*inputs) - want)).item() < TOLERANCE


class WrittenOutLayerNorm(nn.Module):
    """A LayerNorm written out, as older BERT code has it (exported as ReduceMean, Sub, Pow,
    ReduceMean, Add, Sqrt, Div, Mul, Add)."""

    def __init__(self, d, eps=1e-12):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))
        self.bias = nn.Parameter(0.1 * torch.randn(d))
        self.eps = eps

    def forward(self, x):
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        return self.weight * ((x - u) / torch.sqrt(s + self.eps)) + self.bias


class NormedMlp(nn.Module):
    def __init__(self, d=64, hidden=96):
        super().__init__()
        self.norm1 = WrittenOutLayerNorm(d)
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)
        self.norm2 = WrittenOutLayerNorm(d)

    def forward(self, x):
        return self.norm2(x + self.down(torch.relu(self.up(self.norm1(x)))))


def test_layer_norms_written_out_become_layer_normalization():
    torch.manual_seed(5)
    module = NormedMlp()
    inputs = (3.0 + torch.randn(2, 40, 64),)  # rows with a mean far from zero
    traced = trnsim.trace(module, inputs, mode="functional-only")
    assert len(_lowered(traced, "library layer norm")) == 2, traced.nodes
    names = [name for name, _ in traced.nodes]
    for gone in ("ReduceMean", "Sqrt", "Pow", "Sub", "RmsNorm"):
        assert not any(gone in name for name in names), gone
    with torch.no_grad():
        want = module(*inputs)
    assert torch.max(torch.abs(traced(*inputs) - want)).item() < TOLERANCE
    traced2 = trnsim.trace(module, inputs, mode="functional-only", lnc=2)
    assert torch.max(torch.abs(traced2(*inputs) - want)).item() < TOLERANCE


def test_gpt2_linears_with_bias_and_gelu_are_fused():
    torch.manual_seed(24)
    module = models.Gpt2(vocab=96, context=32, d=32, heads=4, layers=2)
    tokens = torch.randint(0, 96, (2, 20))
    traced = trnsim.trace(module, tokens, mode="functional-only")
    # Per block: the qkv, output and two MLP projections (the first with its GELU).
    assert len(_lowered(traced, LINEAR)) == 8, traced.nodes
    assert not any(name.endswith("Erf") for name, _ in traced.nodes)
    with torch.no_grad():
        want = module(tokens)
    assert torch.max(torch.abs(traced(tokens) - want)).item() < TOLERANCE


def test_fused_llama_in_bf16_under_auto_cast_all_stays_close():
    module, inputs = _llama(25, layers=1, tokens=32, d=128, heads=2, kv_heads=1, ff=128)
    traced = trnsim.trace(module, inputs, mode="functional-only", auto_cast="all")
    assert len(_lowered(traced, RMS_NORM)) == 3 and len(_lowered(traced, ROPE)) == 2
    with torch.no_grad():
        want = module(*inputs)
        bf16 = module.to(torch.bfloat16)(*(t.to(torch.bfloat16) for t in inputs)).float()
    # Everything rounds to bf16 (8 significant bits): compared with PyTorch's own bf16 run's
    # distance from its fp32 output, as test_attention_fusion.py does.
    ours = torch.max(torch.abs(traced(*inputs) - want)).item()
    theirs = torch.max(torch.abs(bf16 - want)).item()
    assert ours < 2 * theirs, (ours, theirs)
