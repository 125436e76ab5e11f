"""Attention fusion on the repository's reference models (scripts/torch_reference_models.py and
the models of test_trace.py): the attention subgraph PyTorch exports becomes one
trn.FlashAttention node, lowered to the library's flash attention, and the fused model still
matches PyTorch's CPU output."""
import os
import sys

import torch

import trnsim

sys.path.insert(0, os.path.join(os.environ.get("TRN_SOURCE_DIR", "."), "scripts"))
import torch_reference_models as models  # noqa: E402

# As test_models.py: fp32 throughout, outputs of order 1 (log-probabilities of order log(vocab)).
TOLERANCE = 1e-4
FLASH = "library flash attention"


def _fused(traced):
    return [name for name, how in traced.nodes if how == FLASH]


def _llama(seed, layers, tokens, d, heads, kv_heads, ff):
    """The reference Llama and its inputs (a batch of 2, rotary tables, the causal mask)."""
    torch.manual_seed(seed)
    module = models.Llama(layers=layers, d=d, heads=heads, kv_heads=kv_heads, ff=ff)
    cos, sin = models.rotary_tables(tokens, d // heads)
    return module, (torch.randn(2, tokens, d), cos, sin, models.causal_mask(tokens))


def test_llama_attention_with_grouped_heads_and_a_mask_input_is_one_flash_node():
    module, inputs = _llama(11, layers=2, tokens=24, d=64, heads=8, kv_heads=2, ff=96)
    traced = trnsim.trace(module, inputs)
    assert _fused(traced) == ["/layers.0/FlashAttention", "/layers.1/FlashAttention"]
    names = [name for name, _ in traced.nodes]
    # The scores, their softmax and the repeated key/value heads are gone.
    for gone in ("Softmax", "Expand", "Div_output"):
        assert not any(name.endswith(gone) for name in names), gone
    got = traced(*inputs)
    with torch.no_grad():
        want = module(*inputs)
    assert torch.max(torch.abs(got - want)).item() < TOLERANCE
    # The mask is an input, applied as it is given: a different mask changes the result as it
    # does in PyTorch.
    window = inputs[3].clone()
    window[:, :4] = float("-inf")
    window[:4, 0] = 0.0
    changed = inputs[:3] + (window,)
    with torch.no_grad():
        want = module(*changed)
    assert torch.max(torch.abs(traced(*changed) - want)).item() < TOLERANCE


def test_gpt2_attention_with_a_boolean_causal_buffer_uses_the_causal_kernel():
    torch.manual_seed(12)
    module = models.Gpt2(vocab=96, context=32, d=32, heads=4, layers=2)
    tokens = torch.randint(0, 96, (2, 20))
    traced = trnsim.trace(module, tokens)
    assert len(_fused(traced)) == 2
    assert not any(name.endswith("Where") for name, _ in traced.nodes)
    got = traced(tokens)
    with torch.no_grad():
        want = module(tokens)
    assert torch.max(torch.abs(got - want)).item() < TOLERANCE


def test_bert_style_attention_without_a_mask_is_fused():
    from test_trace import TinyEncoder

    torch.manual_seed(13)
    module = TinyEncoder()
    tokens = torch.randint(0, 50, (2, 12))
    traced = trnsim.trace(module, tokens)
    assert len(_fused(traced)) == 1
    with torch.no_grad():
        want = module(tokens)
    assert torch.max(torch.abs(traced(tokens) - want)).item() < 2e-5


def test_attention_over_bf16_under_auto_cast_all_stays_fused_and_close():
    module, inputs = _llama(14, layers=1, tokens=32, d=128, heads=2, kv_heads=1, ff=128)
    traced = trnsim.trace(module, inputs, auto_cast="all")
    assert len(_fused(traced)) == 1
    with torch.no_grad():
        want = module(*inputs)
        bf16 = module.to(torch.bfloat16)(*(t.to(torch.bfloat16) for t in inputs)).float()
    # Everything rounds to bf16 (8 significant bits): compared with PyTorch's own bf16 run's
    # distance from its fp32 output.
    ours = torch.max(torch.abs(traced(*inputs) - want)).item()
    theirs = torch.max(torch.abs(bf16 - want)).item()
    assert ours < 2 * theirs
