"""Perplexity: lab.perplexity against the Hugging Face guide's loop, same model, text and stride.

GPT-2 small's shapes with random weights (lab.testing.random_models, size "small"), 4,000 tokens,
stride 512 of a 1,024 context. The reference is the guide's "Perplexity of fixed-length models"
loop as printed (under torch.no_grad, one window per forward, labels with -100). Target ratio 1.0:
lab batches the full windows and computes logits only where a token is predicted. The entry also
reports both perplexities and their relative difference (target 1e-5), against the printed loop
and against it with its per-window token count made exact (see lab/perplexity.py).
"""

from __future__ import annotations

import math

from lab.benchmarks import entry, side_by_side

N_TOKENS, STRIDE = 4000, 512


def guide_loop(model, ids, stride: int, context: int, exact_count: bool = False) -> tuple[float, int]:
    """The guide's loop: (perplexity of `ids`, a (1, n) tensor; tokens it counted).

    exact_count replaces the guide's `valid labels - batch size` per window by the labels the shifted
    loss really averages over (see lab/perplexity.py). The tests use this loop as their oracle too.
    """
    import torch

    seq_len, nll_sum, n_tokens, prev_end_loc = ids.size(1), 0.0, 0, 0
    for begin_loc in range(0, seq_len, stride):
        end_loc = min(begin_loc + context, seq_len)
        trg_len = end_loc - prev_end_loc
        input_ids = ids[:, begin_loc:end_loc]
        target_ids = input_ids.clone()
        target_ids[:, :-trg_len] = -100
        with torch.no_grad():
            neg_log_likelihood = model(input_ids, labels=target_ids).loss
        valid = (target_ids != -100).sum().item()
        counted = (target_ids[:, 1:] != -100).sum().item() if exact_count else valid - target_ids.size(0)
        nll_sum += neg_log_likelihood.double().item() * counted
        n_tokens += counted
        prev_end_loc = end_loc
        if end_loc == seq_len:
            break
    return math.exp(nll_sum / n_tokens), n_tokens


def benchmarks() -> list[dict]:
    import torch

    from lab import perplexity
    from lab.testing import random_models

    model, _ = random_models.build("gpt2", "small")
    context = model.config.n_positions
    ids = torch.randint(0, model.config.vocab_size, (1, N_TOKENS), generator=torch.Generator().manual_seed(0))
    listed = ids[0].tolist()

    def ours():
        return math.exp(perplexity.token_nll(model, listed, STRIDE, context)[1].mean())

    lab_s, ref_s = side_by_side(ours, lambda: guide_loop(model, ids, STRIDE, context), repeats=3)
    mine, (printed, _), (exact, _) = ours(), guide_loop(model, ids, STRIDE, context), guide_loop(model, ids, STRIDE,
                                                                                                context, True)
    return [entry(f"perplexity: lab.perplexity vs the HF guide's loop, GPT-2 small shapes, {N_TOKENS:,} tokens, "
                  f"stride {STRIDE}", lab_s, ref_s, 1.0, ppl_lab=mine, ppl_guide=printed, ppl_guide_exact_count=exact,
                  rel_diff_guide=abs(mine - printed) / printed, rel_diff_guide_exact_count=abs(mine - exact) / exact)]
