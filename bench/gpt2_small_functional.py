#!/usr/bin/python3
"""GPT-2-small (124M parameters: 12 layers, hidden 768, 12 heads, vocabulary 50257) at 128
tokens, run functionally on a simulated trn2 logical core (one core, or an LNC=2 pair with
--lnc 2) through ``trnsim.trace`` and checked against
PyTorch's CPU output: the graph compiler's functional scale benchmark (issue 19: under 5 minutes
of host time). The model is scripts/torch_reference_models.py's Gpt2 with random weights from a
fixed seed; it prints the host time of each step, the largest difference from PyTorch and the
simulated time.

Run from the source tree against a release build:
  PYTHONPATH=build/release/python /usr/bin/python3 bench/gpt2_small_functional.py [--lnc 2]
"""
import os
import sys
import time

import torch

import trnsim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import torch_reference_models as models  # noqa: E402


def main():
    lnc = int(sys.argv[sys.argv.index("--lnc") + 1]) if "--lnc" in sys.argv else 1
    torch.manual_seed(124)
    module = models.Gpt2(vocab=50257, context=1024, d=768, heads=12, layers=12).eval()
    tokens = torch.randint(0, 50257, (1, 128))
    start = time.perf_counter()
    traced = trnsim.trace(module, tokens, lnc=lnc)
    traced_at = time.perf_counter()
    got = traced(tokens)
    ran_at = time.perf_counter()
    with torch.no_grad():
        want = module(tokens)
    error = torch.max(torch.abs(got - want)).item()
    scale = torch.max(torch.abs(want)).item()
    print(f"gpt2-small, 128 tokens, LNC={lnc}: export + compile {traced_at - start:.1f} s, "
          f"functional run {ran_at - traced_at:.1f} s, total {ran_at - start:.1f} s host time; "
          f"{traced.instructions} instructions; simulated {traced.last_report.time_us:.1f} us; "
          f"largest difference from PyTorch {error:.3g} on log-probabilities up to {scale:.3g} "
          f"in magnitude")
    # fp32 on both sides: the logits are sums of 768 products of order 1 (the tied embedding),
    # and log-softmax subtracts a log-sum over 50,257 of them, so each side carries a few ulps
    # of the largest magnitude; 1e-5 of it is about 100 ulps.
    return 0 if error < 1e-5 * scale else 1


if __name__ == "__main__":
    sys.exit(main())
