"""The ceiling (ceiling page, chapter 16): the whole `python -m lab ceiling` computation against the bare forward
pass it needs.

`lab.ceiling.measure(loaded, ids, 64)` (top-1 predictions with teacher forcing, e, observed(n) and
(1 - e)^n for n = 1..64, the two conditional error rates) against `model(ids).logits.argmax(-1)` under
inference mode, 1,000 tokens, GPT-2 small's shapes with random weights (context 1,024: one window).
Target ratio 1.2.
"""

from __future__ import annotations

from lab.benchmarks import entry, random_gpt2_small, side_by_side

TOKENS = 1000


def _reference(loaded, ids):
    import torch

    with torch.inference_mode():
        return loaded.model(torch.tensor([ids])).logits[0].argmax(-1)


def benchmarks() -> list[dict]:
    """The ceiling's numbers for 1,000 tokens vs one bare forward pass with its argmax."""
    from lab import ceiling

    loaded, ids = random_gpt2_small(TOKENS)
    lab_s, ref_s = side_by_side(lambda: ceiling.measure(loaded, ids, 64), lambda: _reference(loaded, ids), repeats=5)
    return [entry("ceiling: e, observed(n) vs (1 - e)^n for n = 1..64 and the conditional error rates over 1,000 "
                  "tokens vs one bare forward pass with its argmax, GPT-2 small shapes", lab_s, ref_s, 1.2)]
