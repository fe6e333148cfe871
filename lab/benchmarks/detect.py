"""The detector (detector page, chapter 12): every score of one text against the bare forward passes it needs.

`lab.detect.scoring.scores(lab.detect.scoring.token_stats(performer, ids, observer))` (per-token rank, log-probability,
entropy, p / p_best, top 5, Fast-DetectGPT's mean and variance, Binoculars' cross-entropy; then the
document scores) against `performer(ids).logits` and `observer(ids).logits` under inference mode: the two
forward passes any implementation needs. 256 tokens, two random models with GPT-2 small's shapes
(lab.testing.random_models, seeds 0 and 1). Target ratio 1.2.
"""

from __future__ import annotations

from lab.benchmarks import entry, side_by_side

TOKENS = 256


def _setup():
    """(performer, observer, ids): two lab.models.Loaded-shaped random GPT-2 smalls, one tokenizer, 256 ids."""
    import torch

    from lab.models import Loaded
    from lab.testing import random_models

    pair = []
    for seed in (0, 1):
        model, tok = random_models.build("gpt2", "small", seed=seed)
        model.requires_grad_(False)
        c = model.config
        pair.append(Loaded(f"random-gpt2-small-{seed}", model, tok, "decoder", c.n_positions, c.n_layer, c.n_head,
                           c.n_embd))
    ids = torch.randint(0, pair[0].model.config.vocab_size, (TOKENS,),
                        generator=torch.Generator().manual_seed(0)).tolist()
    return pair[0], pair[1], ids


def _reference(performer, observer, ids):
    """The two forward passes, logits and all."""
    import torch

    with torch.inference_mode():
        x = torch.tensor([ids])
        return performer.model(x).logits, observer.model(x).logits


def benchmarks() -> list[dict]:
    """Every score of a 256-token text vs the two bare forward passes, GPT-2 small's shapes."""
    from lab.detect import scoring as detect

    performer, observer, ids = _setup()
    lab_s, ref_s = side_by_side(lambda: detect.scores(detect.token_stats(performer, ids, observer)),
                                lambda: _reference(performer, observer, ids), repeats=5)
    return [entry("detect: every score of a 256-token text (ranks, log p, entropy, top 5, GLTR, Fast-DetectGPT, "
                  "Binoculars) vs the two bare forward passes they need, GPT-2 small shapes", lab_s, ref_s, 1.2)]
