"""The causal mask, taken apart: scores before softmax, weights after, the trophy experiment, the loss.

For the causal-mask page (chapters 04, 11).

Scores are recomputed from the model's own pieces (the layer's `c_attn` on the hidden state that
enters the layer, from `output_hidden_states`), so the page can show q·k/√d with −∞ above the
diagonal; their softmax is the model's attention (the tests check it). Everything here calls
`lab.attention.run`, so the shared model is never changed (see lab/attention.py).
"""

from __future__ import annotations

import re

import numpy as np

from lab.attention import each_layer, run, stack
from lab.errors import LabError
from lab.models import context_of, kind_of
from lab.text import check_fits, encode, token_texts

# The course's example, and a natural Portuguese pair. Portuguese drops the subject pronoun, and
# if written it would already answer ("ele" = o troféu, "ela" = a mala); the adjective agrees too
# ("pequena" can only be the suitcase). So the word compared is the verb "era", the last one before they differ.
TROPHY = {
    "en": ("The trophy didn't fit in the suitcase because it was too big.",
           "The trophy didn't fit in the suitcase because it was too small.", "it"),
    "pt": ("O troféu não coube na mala porque era grande demais.",
           "O troféu não coube na mala porque era pequena demais.", "era"),
}


class TrophyError(LabError):
    """The two sentences cannot be compared at the word (missing, or they differ before it).

    `reason` ("empty_word", "empty_text", "missing", "differ", "too_long") and `details` let a UI
    write the message in its own language; str(e) is the English one-liner the CLI prints.
    """


def layer_scores(model, hidden, layer: int):
    """Raw attention scores q·k * scale of every head of one layer: (B, H, T, T), no mask.

    `hidden` is the hidden state entering the layer, (B, T, C) (output_hidden_states[layer]).
    """
    import torch

    base = model.base_model
    mtype = model.config.model_type
    n_head = model.config.num_attention_heads
    with torch.inference_mode():
        if mtype == "gpt2":  # pre-norm: GPT-2 normalises before attention
            attn = base.h[layer].attn
            q, k, _ = attn.c_attn(base.h[layer].ln_1(hidden)).split(hidden.shape[-1], dim=2)
        elif mtype == "openai-gpt":  # post-norm: GPT-1 attends over the raw residual stream
            attn = base.h[layer].attn
            q, k, _ = attn.c_attn(hidden).split(hidden.shape[-1], dim=2)
        elif mtype == "roberta":
            attn = base.encoder.layer[layer].attention.self
            q, k = attn.query(hidden), attn.key(hidden)
        else:
            raise ValueError(f"scores are computed for GPT-2, GPT-1 and RoBERTa, not {mtype}")
        b, t, _ = q.shape
        q = q.view(b, t, n_head, -1).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(b, t, n_head, -1).transpose(1, 2)  # (B, nh, T, hs)
        w = torch.matmul(q, k.transpose(-1, -2))  # (B, nh, T, T)
        if mtype == "openai-gpt":
            return w / (q.size(-1) ** 0.5) if attn.scale else w
        return w * attn.scaling  # 1/sqrt(hs), as GPT2Attention / RobertaSelfAttention compute it


def view(model, ids: list[int], causal: bool = True) -> dict:
    """One forward pass: attention [L, H, T, T], scores [L, H, T, T] (−∞ where masked), loss.

    `loss` is the mean next-token cross-entropy (nats) over positions 1..T-1, None for encoders.
    """
    import torch

    out = run(model, [list(ids)], causal=causal, hidden=True, logits=kind_of(model.config) == "decoder")
    n_layer = model.config.num_hidden_layers
    raw = torch.stack([layer_scores(model, out.hidden_states[i], i)[0] for i in range(n_layer)])
    t = len(ids)
    if causal and kind_of(model.config) == "decoder":
        above = torch.ones(t, t, dtype=torch.bool).triu(1)  # keys in the future
        raw = raw.masked_fill(above, float("-inf"))
    loss = None
    if kind_of(model.config) == "decoder" and t > 1:
        logits = out.logits[0, :-1].float()  # (T-1, V): prediction for the next token
        loss = float(torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:])))
    return {"attention": stack(out)[0], "scores": raw.float().numpy(), "loss": loss}


def word_position(tokenizer, text: str, word: str, which: str = "the sentence") -> int:
    """Index of the last token overlapping the first whole-word occurrence of `word` in text.

    A word of several tokens, or one character split into byte tokens (🏆), is compared at its
    last token: the one that has read the whole word.
    """
    found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text)
    if not found:
        short = text if len(text) <= 60 else text[:57] + "..."
        raise TrophyError(f"the word {word!r} is not in {which} ({short!r})", "missing",
                          word=word, which=which, short=short)
    offsets = tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
    return max(i for i, (s, e) in enumerate(offsets) if s < found.end() and e > found.start())


def trophy(model, tokenizer, a: str, b: str, word: str = "it", causal: bool = True) -> dict:
    """Compare the attention rows of `word` in sentences a and b, every layer and head, in ONE pass.

    Both sentences go through one batched forward pass (the shorter padded on the right), so a
    CPU library cannot split the work differently between them: with the causal mask the rows
    are bit for bit equal (max_abs_diff exactly 0.0). Needs the same tokens up to the word.
    """
    word = word.strip()
    if not word:
        raise TrophyError("the word to compare is empty", "empty_word")
    try:
        ids_a, ids_b = encode(tokenizer, a), encode(tokenizer, b)
    except ValueError:
        raise TrophyError("both sentences need some text", "empty_text") from None
    pos, pos_b = word_position(tokenizer, a, word, "sentence a"), word_position(tokenizer, b, word, "sentence b")
    if pos != pos_b or ids_a[: pos + 1] != ids_b[: pos + 1]:
        i = next(i for i in range(max(pos, pos_b) + 1) if ids_a[i:i + 1] != ids_b[i:i + 1])
        ta, tb = (token_texts(tokenizer, ids[i:i + 1]) or ["(end)"] for ids in (ids_a, ids_b))
        raise TrophyError(f"the sentences differ before {word!r} (token {i}: {ta[0]!r} vs {tb[0]!r}); "
                          "they must share every token up to and including the word", "differ",
                          word=word, token=i, a=ta[0], b=tb[0])
    check_fits(max(len(ids_a), len(ids_b)), context_of(model.config), TrophyError)
    out = run(model, [ids_a, ids_b], causal=causal)
    per_layer = [float(np.abs(layer[0, :, pos, :] - layer[1, :, pos, :]).max())  # (H, T): the word's row
                 for layer in each_layer(out)]  # layer: (2, H, T, T)
    return {"tokens_a": token_texts(tokenizer, ids_a), "tokens_b": token_texts(tokenizer, ids_b),
            "position": pos, "max_abs_diff": max(per_layer), "per_layer": per_layer}
