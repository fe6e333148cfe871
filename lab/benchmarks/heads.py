"""Heads at work: the activation-patching grid against nnsight doing the same work, and the knock-out grid.

1. The full patching grid of lab.patching.runs (every layer x position of the residual stream, every layer x head
   at the last position, and the clean and corrupted runs) on a random model of GPT-2 small's shapes
   (lab.benchmarks.random_gpt2_small), 32 tokens, the corrupted prompt the clean one with two tokens changed,
   against nnsight 0.8.1 computing the same numbers with its own interventions on the same transformers model:
   one trace of the clean run saving every block's input and c_proj input, one of the corrupted run, then per
   layer one trace with one invoke per patch (32 positions + 12 heads), each reading the logit difference from
   the model's logits (the usual way to batch patches in nnsight). Target ratio 1.2. lab starts each layer's
   patched runs at that layer's block and computes only the two answer logits; nnsight's runs go through the
   whole model and its output layer: that is what the ratio measures.
2. lab.heads.knockout_grid (each of the 144 heads zero-ablated alone, the loss over the 32 tokens) on the same
   model: its time, and nnsight doing the same (one trace per head, c_proj's input slice set to zero), reported.
Without nnsight installed (requirements-dev.txt pins it) each entry says so.
"""

from __future__ import annotations

import time

from lab.benchmarks import entry, random_gpt2_small, side_by_side

TOKENS = 32
CHANGED = (9, 20)  # the positions where the corrupted prompt differs


def _pair(loaded, ids):
    """(clean ids, corrupted ids, (clean answer, corrupted answer)): two tokens changed, two answer ids."""
    vocab = loaded.model.config.vocab_size
    corrupt = list(ids)
    for p in CHANGED:
        corrupt[p] = (corrupt[p] + 1) % vocab
    return list(ids), corrupt, (ids[0], ids[1])


def nnsight_patching(model, tokenizer, clean, corrupt, a, b) -> tuple[list, list]:
    """Every patched logit difference as nnsight computes it (lab.testing.nnsight_oracle, the tests' oracle), under
    inference mode as lab runs: (per layer the T residual patches, per layer the H head patches)."""
    import torch

    from lab.testing import nnsight_oracle

    with torch.inference_mode():
        out = nnsight_oracle.patching(model, tokenizer, clean, corrupt, a, b)
    return out["resid_diff"].tolist(), out["heads_diff"].tolist()


def nnsight_knockout_grid(model, ids) -> list:
    """The mean loss (nats) with each head zero-ablated alone, one nnsight trace per head."""
    import torch
    from nnsight import NNsight

    lm, cfg = NNsight(model), model.config
    d, x, target = cfg.n_embd // cfg.n_head, torch.tensor([ids]), torch.tensor(ids[1:])
    out = []
    with torch.inference_mode():
        for layer in range(cfg.n_layer):
            for head in range(cfg.n_head):
                with lm.trace(x):
                    lm.transformer.h[layer].attn.c_proj.input[:, :, head * d:(head + 1) * d] = 0
                    logits = lm.output.logits.save()
                out.append(float(torch.nn.functional.cross_entropy(logits[0, :-1], target)))
    return out


def benchmarks() -> list[dict]:
    from lab import heads, patching

    loaded, ids = random_gpt2_small(TOKENS)
    clean, corrupt, (a, b) = _pair(loaded, ids)
    model = loaded.model
    name = (f"heads: the full patching grid (12 layers x {TOKENS} positions + 12 x 12 heads), GPT-2 small shapes: "
            "lab.patching vs nnsight's interventions, batched per layer")
    try:
        import nnsight  # noqa: F401
    except ImportError:
        return [{"name": name, "skipped": "nnsight is not installed (pip install -r requirements-dev.txt)"}]
    lab_s, ref_s = side_by_side(lambda: patching.runs(model, clean, corrupt, (a, b)),
                                lambda: nnsight_patching(model, loaded.tokenizer, clean, corrupt, a, b),
                                repeats=3, warmup=0)
    out = [entry(name, lab_s, ref_s, 1.2)]
    started = time.perf_counter()
    heads.knockout_grid(model, ids)
    knock_s = time.perf_counter() - started
    started = time.perf_counter()
    nnsight_knockout_grid(model, ids)
    ref_s = time.perf_counter() - started
    knock = entry(f"heads: the knock-out grid (each of 144 heads alone, {TOKENS} tokens), GPT-2 small shapes: "
                  "lab.heads.knockout_grid vs one nnsight trace per head", knock_s, ref_s, 1.0,
                  seconds=round(knock_s, 3))
    out.append({**knock, "target": None, "ok": None, "note": "reported, no target"})
    return out
