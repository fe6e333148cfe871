"""Fill in the blank (fill page, chapters 09-11): the per-position table of `python -m lab fill --compare` against
the bare forward passes it needs.

`lab.fill.compare(encoder, decoder, text)` over a 64-token text (each token masked alone in the encoder, batches
of 32, both sides visible; the decoder once, left to right; probabilities, ranks, token texts) against those
passes written directly: the encoder on the 64 masked copies (32 at a time) with its head on the masked slots,
and one decoder pass with its logits. RoBERTa-base and GPT-2 small shapes, random weights, one shared BPE.
Target ratio 1.2.
"""

from __future__ import annotations

from lab.benchmarks import entry, side_by_side

TOKENS = 64


def _setup():
    from lab.models import Loaded
    from lab.testing import random_models

    loaded = []
    for arch, name in (("roberta", "random-roberta-base"), ("gpt2", "random-gpt2-small")):
        model, tok = random_models.build(arch, "small")
        model.requires_grad_(False)
        c = model.config
        kind = "encoder" if arch == "roberta" else "decoder"
        loaded.append(Loaded(name, model, tok, kind, 512 if arch == "roberta" else c.n_positions,
                             c.num_hidden_layers, c.num_attention_heads, c.hidden_size))
    words = "the package manager keeps a list of every file that belongs to each installed package".split()
    text = " ".join(words * 8)
    ids = loaded[1].tokenizer(text)["input_ids"][:TOKENS]
    return loaded[0], loaded[1], loaded[1].tokenizer.decode(ids)


def _reference(encoder, decoder, text):
    import torch

    ids = encoder.tokenizer(text)["input_ids"]  # <s> … </s>
    n = len(ids) - 2
    with torch.inference_mode():
        for s in range(0, n, 32):
            rows = torch.tensor([ids] * min(32, n - s))
            where = torch.arange(s, s + len(rows)) + 1
            rows[torch.arange(len(rows)), where] = encoder.tokenizer.mask_token_id
            hidden = encoder.model.base_model(input_ids=rows).last_hidden_state
            torch.log_softmax(encoder.model.lm_head(hidden[torch.arange(len(rows)), where]), -1)
        torch.log_softmax(decoder.model(input_ids=torch.tensor([decoder.tokenizer(text)["input_ids"]])).logits, -1)


def benchmarks() -> list[dict]:
    """The encoder-vs-decoder table over 64 tokens vs its bare forward passes."""
    from lab import fill

    encoder, decoder, text = _setup()
    lab_s, ref_s = side_by_side(lambda: fill.compare(encoder, decoder, text),
                                lambda: _reference(encoder, decoder, text), repeats=5)
    return [entry("fill: the encoder-vs-decoder table over 64 tokens (each masked alone; left to right) vs the bare "
                  "forward passes it needs, RoBERTa-base and GPT-2 small shapes", lab_s, ref_s, 1.2)]
