"""GPT-2's code written out (code page, chapter 13): lab.gpt2's forward pass against transformers' own, the same
model and 128 tokens, and the same pass with the page's trace recorded.

GPT-2 small's shapes with random weights (12 layers x 12 heads x 768, 50,257 tokens), under inference mode on
both sides. Targets: 1.5 for the bare pass, 2.0 with the trace (lab.trace.run: one layer's steps, their views).
"""

from __future__ import annotations

from lab.benchmarks import entry, random_gpt2_small, side_by_side

TOKENS = 128


def benchmarks() -> list[dict]:
    """lab.gpt2.model vs transformers' forward; lab.trace.run vs the same."""
    import torch

    from lab import gpt2, trace

    loaded, ids = random_gpt2_small(TOKENS)
    w, x = trace.weights(loaded.model), torch.tensor(ids)

    def ours():
        with torch.inference_mode():
            return gpt2.model(w, x)

    def theirs():
        with torch.inference_mode():
            return loaded.model(input_ids=x[None]).logits

    plain = side_by_side(ours, theirs, repeats=7)
    traced = side_by_side(lambda: trace.run(loaded, ids, 6, 3), theirs, repeats=7)
    return [entry("code: lab.gpt2's forward pass vs transformers' GPT2LMHeadModel, 128 tokens, GPT-2 small shapes",
                  *plain, 1.5),
            entry("code: the same pass with the page's trace recorded (layer 6, head 3) vs transformers' forward",
                  *traced, 2.0)]
