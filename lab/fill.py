"""Fill in the blank vs continue the text: what an encoder sees that a decoder cannot (chapters 09-11).

- `fill`: the encoder's top candidates at every <mask> of a text (one pass with every mask in place, so each
  is filled on its own), as transformers' fill-mask pipeline gives them; `fill_in_order`: the masks filled one
  after another, left to right, each with the best candidate before the next is read.
- `compare`: the same text token by token: the encoder's probability of each token when it alone is masked
  (both sides visible: lab.perplexity's pseudo-likelihood loop) beside a decoder's probability of it from the
  left context only, with both ranks.
- `masking_epochs`: how RoBERTa-style training picks what to ask about (15 % of the tokens, then 80 % <mask>,
  10 % a random token, 10 % unchanged), with static masking (one pattern every epoch) or dynamic masking (a new
  one each time), drawn by the very function that trained course-roberta (lab.course.train.mask_tokens).

A mask absorbs the space before it because the encoder's tokenizer says so (<mask> strips left, in
roberta-base's files and in course-roberta's): "the <mask> sat" asks for " cat", not for "cat" after a lone
space token, here and in transformers' fill-mask pipeline alike. "[MASK]" is read as <mask>.
"""

from __future__ import annotations

import re

import numpy as np

from lab.errors import LabError
from lab.models import context_of, kind_of, require_decoder
from lab.text import check_fits

MASK_FORMS = re.compile(r"<mask>|\[MASK\]")


class FillError(LabError):
    """Bad input: `reason` "empty", "no_mask", "decoder" (model: fill needs an encoder), "encoder" (model: the
    comparison's decoder is one), "in_word" (char: a mask glued to a letter or digit), "too_long" (tokens,
    context), "tokenizer" (encoder, decoder, position: the two split the text differently), "pair" (word: the
    word that refers back is not in both sentences of a pair before they differ)."""


def masked_ids(tokenizer, text: str) -> tuple[list[int], list[int]]:
    """(ids, the positions of the masks): the tokenizer's own ids for text with every mask in place. The space
    before a mask goes with it (the mask stands for a token with its space) because the tokenizer's <mask>
    strips left, as roberta-base's does and course-roberta's ships (lab.encodings.hf_roberta_tokenizer);
    transformers' fill-mask pipeline then reads the text as the page does."""
    if not text.strip():
        raise FillError("the text is empty", "empty")
    marks = list(MASK_FORMS.finditer(text))
    if not marks:
        raise FillError("the text has no mask: put <mask> (or [MASK]) where a word should be guessed", "no_mask")
    for m in marks:
        before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
        if before.isalnum() or after.isalnum():
            raise FillError(f"the mask at character {m.start()} is inside a word: the model fills whole tokens, "
                            "so put a space or punctuation around it", "in_word", char=m.start())
    ids = list(tokenizer(MASK_FORMS.sub(tokenizer.mask_token, text), verbose=False)["input_ids"])
    return ids, [i for i, t in enumerate(ids) if t == tokenizer.mask_token_id]


def check_encoder(loaded) -> None:
    if kind_of(loaded.model.config) != "encoder":
        raise FillError(f"{loaded.name} is a decoder: it continues a text, it cannot fill a blank in the middle",
                        "decoder", model=loaded.name)


def _fits(loaded, ids: list[int]) -> None:
    check_fits(len(ids), context_of(loaded.model.config), FillError, loaded.name)


def _candidates(tokenizer, logits, top: int) -> list[dict]:
    """The top tokens of one position's logits: [{"id", "token", "p"}] (token: its own text)."""
    import torch

    from lab.text import token_texts

    p = torch.softmax(logits.float(), dim=-1)
    best = p.topk(top)
    ids = best.indices.tolist()
    return [{"id": i, "token": s, "p": v} for i, s, v in zip(ids, token_texts(tokenizer, ids), best.values.tolist(),
                                                            strict=True)]


def _logits(model, ids: list[int]):
    import torch

    with torch.inference_mode():
        return model(input_ids=torch.tensor([ids])).logits[0]  # (T, V)


def fill(loaded, text: str, top: int = 5) -> dict:
    """{"masks": [{"position", "candidates"}]}: every mask filled on its own, all of them in one pass."""
    check_encoder(loaded)
    ids, masks = masked_ids(loaded.tokenizer, text)
    _fits(loaded, ids)
    logits = _logits(loaded.model, ids)
    return {"masks": [{"position": p, "candidates": _candidates(loaded.tokenizer, logits[p], top)} for p in masks]}


def fill_in_order(loaded, text: str, top: int = 5) -> dict:
    """{"masks": [{"position", "candidates", "chosen"}], "ids"}: the masks filled left to right, each read with the
    ones before it already filled by their best candidate."""
    check_encoder(loaded)
    ids, masks = masked_ids(loaded.tokenizer, text)
    _fits(loaded, ids)
    out = []
    for p in masks:
        candidates = _candidates(loaded.tokenizer, _logits(loaded.model, ids)[p], top)
        ids = ids[:p] + [candidates[0]["id"]] + ids[p + 1:]
        out.append({"position": p, "candidates": candidates, "chosen": candidates[0]["token"]})
    return {"masks": out, "ids": ids}


def body_tokens(loaded, ids: list[int]) -> list[str]:
    """The tokens of ids as the tokenizer names them (byte-level pieces), specials left out."""
    specials = set(loaded.tokenizer.all_special_ids)
    return [s for i, s in zip(ids, loaded.tokenizer.convert_ids_to_tokens(ids), strict=True) if i not in specials]


def check_pair(encoder, decoder, text: str) -> tuple[list[int], list[int]]:
    """(encoder ids, decoder ids) for text; FillError unless the first is an encoder, the second a decoder, both
    split the text into the same tokens and the text fits both contexts."""
    from lab.text import encode

    check_encoder(encoder)
    require_decoder(decoder, FillError, "the comparison")
    if not text.strip():
        raise FillError("the text is empty", "empty")
    enc_ids, dec_ids = encode(encoder.tokenizer, text), encode(decoder.tokenizer, text)
    a, b = body_tokens(encoder, enc_ids), body_tokens(decoder, dec_ids)
    if a != b:
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        raise FillError(f"{encoder.name} and {decoder.name} split the text differently (from token {at} on): "
                        "compare two models that share one tokenizer", "tokenizer", encoder=encoder.name,
                        decoder=decoder.name, position=at)
    _fits(encoder, enc_ids)
    _fits(decoder, dec_ids)
    return enc_ids, dec_ids


def _rank(logp, target) -> tuple[np.ndarray, np.ndarray]:
    """(probability, 1-based rank) of each row's target in log-probability rows (B, V)."""
    chosen = logp.gather(1, target[:, None])  # (B, 1)
    return chosen[:, 0].exp().double().numpy(), ((logp > chosen).sum(1) + 1).numpy()


def encoder_rows(encoder, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(p, rank) of every non-special token masked alone, both sides visible (lab.perplexity.masked_rows)."""
    from lab.perplexity import masked_rows

    p, rank = [], []
    specials = set(encoder.tokenizer.all_special_ids)
    context = context_of(encoder.model.config)
    for _, logp, target, _ in masked_rows(encoder.model, ids, encoder.tokenizer.mask_token_id, specials, context):
        a, b = _rank(logp, target)
        p.append(a)
        rank.append(b)
    return np.concatenate(p), np.concatenate(rank)


def decoder_rows(decoder, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(p, rank) of every token after the first from its left context only, one pass."""
    import torch

    logp = torch.log_softmax(_logits(decoder.model, ids)[:-1].float(), dim=-1)  # row t predicts ids[t + 1]
    return _rank(logp, torch.tensor(ids[1:]))


def compare(encoder, decoder, text: str) -> dict:
    """{"positions": [{"token", "encoder_p", "encoder_rank", "decoder_p", "decoder_rank"}]}, one per token; the
    decoder's entry for the first token is null (nothing is on its left)."""
    from lab.text import token_texts

    enc_ids, dec_ids = check_pair(encoder, decoder, text)
    ep, er = encoder_rows(encoder, enc_ids)
    dp, dr = decoder_rows(decoder, dec_ids)
    tokens = token_texts(decoder.tokenizer, dec_ids)
    return {"positions": [{"token": tokens[i], "encoder_p": float(ep[i]), "encoder_rank": int(er[i]),
                           "decoder_p": float(dp[i - 1]) if i else None,
                           "decoder_rank": int(dr[i - 1]) if i else None} for i in range(len(tokens))]}


# The trophy pair for fill in the blank, per language: (sentence A, sentence B, the word that refers back). English
# is lab.causal's; in Portuguese both nouns are feminine (a taça, a mala), so "ela" is as open as English "it" until
# the deciding word ("grande" / "pequena"). lab.causal's Portuguese pair ("O troféu ... porque era ...") has no
# pronoun: its "era" and its last piece ("is" of "demais") are the same in both sentences and decide nothing.
PAIRS = {
    "en": ("The trophy didn't fit in the suitcase because it was too big.",
           "The trophy didn't fit in the suitcase because it was too small.", "it"),
    "pt": ("A taça não coube na mala porque ela era grande demais.",
           "A taça não coube na mala porque ela era pequena demais.", "ela"),
}


def pair_positions(tokenizer, a: str, b: str, word: str) -> list[tuple[int, int]]:
    """For each sentence of a pair, (the token where `word` starts, the first token where the sentences differ): the
    word that refers back and the word that decides what it refers to. FillError ("pair") when the word is not in
    both sentences before the point where they differ."""
    out = []
    ids = [tokenizer(s, verbose=False)["input_ids"] for s in (a, b)]
    differ = next((i for i, (x, y) in enumerate(zip(*ids, strict=False)) if x != y), None)
    for sentence in (a, b):
        at = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", sentence)
        offsets = tokenizer(sentence, return_offsets_mapping=True)["offset_mapping"]
        k = next((i for i, (lo, hi) in enumerate(offsets) if at and lo <= at.start() < hi), None)
        if k is None or differ is None or k >= differ:
            raise FillError(f"'{word}' must come in both sentences before they differ", "pair", word=word)
        out.append((k, differ))
    return out


def right_context_gain(positions: list[dict]) -> list[float | None]:
    """log(encoder p / decoder p) per position, in nats: how much seeing the right side helped (None first)."""
    return [None if r["decoder_p"] is None else float(np.log(max(r["encoder_p"], 1e-30) / max(r["decoder_p"], 1e-30)))
            for r in positions]


ACTIONS = ("mask", "random", "kept")


def masking_epochs(ids: list[int], epochs: int, seed: int, dynamic: bool) -> list[list[str | None]]:
    """What RoBERTa-style training asks about in each epoch: per epoch, per token None (not asked) or its action
    ("mask": shown as <mask>, "random": shown as a random token, "kept": shown as itself), drawn by
    lab.course.train.mask_tokens on course-roberta's ids. Static masking draws one pattern and reuses it
    every epoch; dynamic masking draws a new one each epoch. Seeded: the same seed, the same epochs."""
    import torch

    from lab.course.train import mask_tokens

    x = torch.tensor([ids])
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(epochs):
        if not dynamic:
            gen.manual_seed(seed)  # the same draws: the same pattern
        inputs, labels = mask_tokens(x, gen)
        chosen, shown = labels[0] != -100, inputs[0]
        out.append([None if not c else "mask" if s == ct_mask() else "kept" if s == t else "random"
                    for c, s, t in zip(chosen.tolist(), shown.tolist(), ids, strict=True)])
    return out


def ct_mask() -> int:
    """course-roberta's <mask> id."""
    from lab.course.tokenizer import ENC_MASK

    return ENC_MASK
