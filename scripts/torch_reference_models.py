"""Reference PyTorch models the graph compiler is checked and measured on, written the way their
public implementations write them (no weights are downloaded; they come from a seed, or are not
materialised at all for the shape-only exports).

- ``Llama``: a Llama-style decoder: RMSNorm written out (pow, mean, rsqrt), rotary embeddings by
  rotate_half (slices, negation, concatenation) against cos/sin inputs, grouped-query attention
  (key/value heads repeated by expand + reshape, as Hugging Face's ``repeat_kv`` does), an
  additive causal mask input, and a SwiGLU MLP. Projections are ``x @ W`` with W stored [in, out].
- ``Gpt2``: a GPT-2-style decoder as Hugging Face writes it: a boolean causal-mask buffer sliced
  to the sequence and applied with ``torch.where`` against the dtype's minimum, tanh-free GELU,
  and a language-model head tied to the token embedding, with log-softmax over the vocabulary.

Used by tests/python/test_models.py (small shapes, functional, against PyTorch's CPU outputs) and
scripts/export_llama3_8b_shape.py (the Llama-3-8B shape for the compile-and-simulate benchmark).
"""
import math

import torch
from torch import nn


class Projection(nn.Module):
    """x @ W with W stored [in, out], without bias (Llama's projections)."""

    def __init__(self, d_in, d_out, weight=None):
        super().__init__()
        self.weight = weight if weight is not None else nn.Parameter(
            torch.randn(d_in, d_out) / math.sqrt(d_in))

    def forward(self, x):
        return x @ self.weight


class RmsNorm(nn.Module):
    def __init__(self, d, weight=None, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = weight if weight is not None else nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ff, make=None):
        super().__init__()
        make = make or (lambda *shape: None)
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        kv = kv_heads * self.head_dim
        self.attn_norm = RmsNorm(d, make(d))
        self.q = Projection(d, d, make(d, d))
        self.k = Projection(d, kv, make(d, kv))
        self.v = Projection(d, kv, make(d, kv))
        self.o = Projection(d, d, make(d, d))
        self.mlp_norm = RmsNorm(d, make(d))
        self.gate = Projection(d, ff, make(d, ff))
        self.up = Projection(d, ff, make(d, ff))
        self.down = Projection(ff, d, make(ff, d))

    def repeat_kv(self, t, b, s):
        rep = self.heads // self.kv_heads
        t = t[:, :, None].expand(b, self.kv_heads, rep, s, self.head_dim)
        return t.reshape(b, self.heads, s, self.head_dim)

    def forward(self, x, cos, sin, mask):
        b, s, d = x.shape
        h = self.attn_norm(x)
        q = self.q(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = self.repeat_kv(k, b, s), self.repeat_kv(v, b, s)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim) + mask
        attn = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.o(attn)
        h = self.mlp_norm(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    """Decoder layers over hidden states (the embedding lookup is the caller's), a final norm.
    ``make(*shape)``, when given, makes every parameter (the shape-only export passes one that
    does not materialise data)."""

    def __init__(self, layers, d, heads, kv_heads, ff, make=None):
        super().__init__()
        self.layers = nn.ModuleList(LlamaLayer(d, heads, kv_heads, ff, make) for _ in range(layers))
        self.norm = RmsNorm(d, make(d) if make else None)

    def forward(self, x, cos, sin, mask):
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)


def rotary_tables(tokens, head_dim, base=10000.0):
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(tokens).float(), inv)
    emb = torch.cat((angles, angles), dim=-1)
    return emb.cos(), emb.sin()


def causal_mask(tokens):
    return torch.triu(torch.full((tokens, tokens), float("-inf")), 1)


class Gpt2Block(nn.Module):
    def __init__(self, d, heads, context):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.register_buffer("bias", torch.tril(torch.ones(context, context, dtype=torch.bool))
                             .view(1, 1, context, context))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        causal = self.bias[:, :, :s, :s]
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.c_proj(y)
        return x + self.mlp(self.ln_2(x))


class Gpt2(nn.Module):
    def __init__(self, vocab, context, d, heads, layers):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(context, d)
        self.h = nn.ModuleList(Gpt2Block(d, heads, context) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1])
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return torch.log_softmax(logits, dim=-1)
