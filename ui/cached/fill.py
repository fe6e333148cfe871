"""What the fill-in-the-blank page computes (chapters 09-11): the encoder's fills, the encoder-vs-decoder table,
the trophy pair and the masking epochs, cached with st.cache_data; models come from ui.model_loader by name,
never hashed. ui.draw.fill draws."""

from __future__ import annotations

import streamlit as st

from lab import fill
from lab.text import readable_texts, token_texts
from ui.model_loader import get_model

ENCODER = "course-roberta"
DECODER = "course-gpt2"
EPOCHS = 10  # epochs the masking section steps through


@st.cache_data(max_entries=64, show_spinner=False)
def filled(model: str, text: str, top: int, in_order: bool) -> dict:
    """lab.fill.fill (or fill_in_order) plus the sentence with each mask's best candidate, as runs of text
    [(text, filled?)] (a filled token as token_texts gives it: a lone byte as \\xc3, for ui.token_words to word).
    FillError on bad input."""
    m = get_model(model)
    r = (fill.fill_in_order if in_order else fill.fill)(m, text, top)
    ids, masks = fill.masked_ids(m.tokenizer, text)
    best = {x["position"]: x["candidates"][0]["id"] for x in r["masks"]}
    specials = set(m.tokenizer.all_special_ids) - {m.tokenizer.mask_token_id}
    runs, piece = [], []
    for i, t in enumerate(ids + [None]):  # the text between masks decoded whole (split characters stay whole)
        if t is None or i in best:
            runs += [(m.tokenizer.decode(piece), False)] if piece else []
            runs += [(token_texts(m.tokenizer, [best[i]])[0], True)] if t is not None else []  # words: ui
            piece = []
        elif t not in specials:
            piece.append(t)
    return {"masks": r["masks"], "sentence": runs, "n_masks": len(masks)}


@st.cache_data(max_entries=32, show_spinner=False)
def compared(encoder: str, decoder: str, text: str) -> dict:
    """lab.fill.compare plus each token as text (a split character read whole) and the right context's gain."""
    e, d = get_model(encoder), get_model(decoder)
    r = fill.compare(e, d, text)
    ids = d.tokenizer(text)["input_ids"]
    return {"positions": r["positions"], "labels": readable_texts(d.tokenizer, ids),
            "gain": fill.right_context_gain(r["positions"])}


@st.cache_data(max_entries=16, show_spinner=False)
def trophy(encoder: str, decoder: str, lang: str) -> list[dict]:
    """The trophy pair (lab.fill.PAIRS): for each sentence, the token where the word that refers back starts ("it",
    "ela") and the first token of the word that decides what it refers to (" big" / " small", " grand" / " pe"),
    each as text with both models' probabilities."""
    a, b, word = fill.PAIRS[lang]
    rows = []
    for sentence, ks in zip((a, b), fill.pair_positions(get_model(decoder).tokenizer, a, b, word), strict=True):
        r = compared(encoder, decoder, sentence)
        pos = r["positions"]
        rows += [{"sentence": sentence, "token": r["labels"][i], "encoder_p": pos[i]["encoder_p"],
                  "decoder_p": pos[i]["decoder_p"]} for i in ks]
    return rows


@st.cache_data(max_entries=32, show_spinner=False)
def masking(text: str, seed: int, dynamic: bool) -> dict:
    """EPOCHS epochs of lab.fill.masking_epochs on course-roberta's ids for the text: {"tokens", "epochs"}
    (the <s> and </s> left out; tokens read as text: the two byte tokens of ê as "ê ·1/2", "ê ·2/2")."""
    m = get_model(ENCODER)
    ids = m.tokenizer(text)["input_ids"]
    ids = ids if len(ids) <= m.context else ids[:m.context - 1] + ids[-1:]  # keep </s>
    epochs = fill.masking_epochs(ids, EPOCHS, seed, dynamic)
    return {"tokens": readable_texts(m.tokenizer, ids)[1:-1], "epochs": [e[1:-1] for e in epochs]}
