"""trnsim.trace: PyTorch modules exported through ONNX, compiled by the graph compiler and run on
a simulated trn2 core, their outputs checked against the same module run by PyTorch on the CPU."""
import numpy as np
import pytest
import torch
from torch import nn

import trnsim

torch.manual_seed(7)


class RmsNormSwiGlu(nn.Module):
    """A Llama-style MLP block: RMSNorm written out (pow, mean, rsqrt), SwiGLU, a residual."""

    def __init__(self, d=64, hidden=96):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(d) + 0.5)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class Attention(nn.Module):
    """Pre-norm multi-head self-attention with a GELU MLP (a GPT-2-style block without a mask)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln(x)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(x)


def _check(module, x):
    traced = trnsim.trace(module, x)
    got = traced(x)
    with torch.no_grad():
        want = module(x)
    assert isinstance(got, torch.Tensor)
    assert got.shape == want.shape
    # fp32 throughout: a few ulps per operation over a few dozen operations, outputs of order 1.
    assert torch.max(torch.abs(got - want)).item() < 2e-5
    return traced


def test_mlp_matches_pytorch():
    module = nn.Sequential(nn.Linear(48, 160), nn.ReLU(), nn.Linear(160, 24))
    traced = _check(module, torch.randn(200, 48))
    # The ReLU goes with the first product (fuse-linear): two nodes.
    assert [how for _, how in traced.nodes] == ["library linear (bias and Relu fused)",
                                                "library linear (bias fused)"]
    assert traced.last_report.time_us > 0


def test_llama_style_mlp_block_matches_pytorch():
    _check(RmsNormSwiGlu(), torch.randn(3, 40, 64))


def test_attention_block_matches_pytorch():
    traced = _check(Attention(), torch.randn(2, 24, 32))
    assert isinstance(traced.last_report.bound_by, str) and traced.last_report.bound_by


def test_numpy_inputs_give_numpy_outputs():
    module = nn.Sequential(nn.Linear(16, 8), nn.Tanh())
    x = np.linspace(-1, 1, 5 * 16, dtype=np.float32).reshape(5, 16)
    traced = trnsim.trace(module, torch.from_numpy(x))
    got = traced(x)
    assert isinstance(got, np.ndarray)
    with torch.no_grad():
        want = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, atol=2e-6, rtol=0)


def test_an_operator_without_a_lowering_is_named():
    class Product(nn.Module):
        def forward(self, x):
            return torch.prod(x, dim=-1)

    with pytest.raises(trnsim.Error, match=r"\(ReduceProd\).*no lowering"):
        trnsim.trace(Product(), torch.randn(2, 4))


class Rotary(nn.Module):
    """Rotary position embedding as Llama's reference code writes it: rotate_half by slicing the
    last dimension in two, negating and concatenating, against fixed cos and sin tables."""

    def __init__(self, tokens=16, d=32):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        angles = torch.outer(torch.arange(tokens).float(), inv)
        emb = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * self.cos + rotated * self.sin


def test_rotary_embedding_matches_pytorch():
    traced = _check(Rotary(), torch.randn(2, 4, 16, 32))
    # Slices, Neg, Concat, the products and their sum: one trn.Rope node (fuse-rope).
    assert [how for _, how in traced.nodes] == ["library rope"]


class Flip(nn.Module):
    """torch.flip, which the exporter writes as a Slice with step -1."""

    def forward(self, x):
        return x.flip(1) * 2 + x


def test_flip_a_slice_with_negative_steps_matches_pytorch():
    traced = _check(Flip(), torch.randn(2, 6, 8))
    assert traced.nodes[0][0].endswith("Slice")


class TinyEncoder(nn.Module):
    """A BERT-style encoder: token and position embeddings (Gather), an embedding LayerNorm and a
    post-norm self-attention block with a GELU MLP, no mask."""

    def __init__(self, vocab=50, tokens=12, d=32):
        super().__init__()
        self.words = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(tokens, d)
        self.register_buffer("ids", torch.arange(tokens))
        self.ln = nn.LayerNorm(d)
        self.block = Attention(d)

    def forward(self, tokens):
        return self.block(self.ln(self.words(tokens) + self.positions(self.ids)))


def test_bert_style_encoder_with_token_ids_matches_pytorch():
    module = TinyEncoder()
    tokens = torch.randint(0, 50, (2, 12))
    traced = trnsim.trace(module, tokens)
    assert "DMA gather of rows" in [how for _, how in traced.nodes]
    got = traced(tokens)
    with torch.no_grad():
        want = module(tokens)
    assert torch.max(torch.abs(got - want)).item() < 2e-5


def test_a_token_id_outside_the_table_is_an_error():
    module = TinyEncoder()
    traced = trnsim.trace(module, torch.randint(0, 50, (2, 12)))
    with pytest.raises(trnsim.Error, match=r"row index 50 .* outside the 50 rows"):
        traced(torch.full((2, 12), 50, dtype=torch.int64))
    with pytest.raises(trnsim.Error, match=r"outside the int32 range"):
        traced(torch.full((2, 12), 2**40, dtype=torch.int64))


class TinyGpt(nn.Module):
    """A GPT-2-style decoder: token and position embeddings, pre-norm causal self-attention (the
    mask added to the scores as a 0 / -inf buffer), a GELU MLP, a final LayerNorm and the
    language-model head."""

    def __init__(self, vocab=64, tokens=16, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.words = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(tokens, d)
        self.register_buffer("ids", torch.arange(tokens))
        self.register_buffer("mask", torch.triu(torch.full((tokens, tokens), float("-inf")), 1))
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.words(tokens) + self.positions(self.ids)
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5 + self.mask
        x = x + self.proj((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, d))
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln_f(x))


def test_gpt_style_causal_decoder_matches_pytorch():
    module = TinyGpt()
    tokens = torch.randint(0, 64, (2, 16))
    traced = trnsim.trace(module, tokens)
    got = traced(tokens)
    with torch.no_grad():
        want = module(tokens)
    assert got.shape == (2, 16, 64)
    assert torch.max(torch.abs(got - want)).item() < 2e-5
    # Causality: changing the last token leaves every earlier position's logits as they were.
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 64
    assert torch.equal(traced(changed)[:, :-1], got[:, :-1])
