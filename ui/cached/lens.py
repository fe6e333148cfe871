"""What the logit-lens page computes (chapter 05); ui.draw.lens draws beside the page.

One forward pass per (model, text, target word), cached with st.cache_data; the model comes from
ui.model_loader by name, never hashed. Without a typed word the target at every position is the
model's own final prediction there, so picking a position or moving the grid's window only
re-slices the cached result: no new forward pass.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lab import lens
from lab.text import encode, readable, run_labels, token_texts
from ui.model_loader import get_model

TOP = 5  # guesses kept per cell: the grid's tooltip shows them all


@st.cache_data(max_entries=16, show_spinner=False)
def lens_view(model_name: str, text: str, word: str | None = None) -> dict:
    """The lens of text (cut at the model's context; `cut` says so) with every position's target:
    `word` (one token, as typed) or, for None, the model's final prediction at each position.
    `tokens` are each token's own text (a lone byte as \\xc3); `labels` the axis labels, read as text
    (lab.text.run_labels: "6 ã ·1/2", "7 ã ·2/2"); `runs` lab.text.readable's records.

    Raises LensError for a word that is not one token, before any forward pass.
    """
    m = get_model(model_name)
    target = None if word is None else lens.target_id(m.tokenizer, word)
    ids = encode(m.tokenizer, text)
    n_total, ids = len(ids), ids[:m.context]
    result = lens.lens(m.model, ids, top=TOP, target=target)
    names, runs = lens.token_names(m.tokenizer, result), readable(m.tokenizer, ids)
    top_tokens = np.vectorize(names.__getitem__, otypes=[object])(result["top_ids"])  # (L+1, T, K) str
    return {"ids": ids, "n_total": n_total, "cut": n_total > len(ids), "tokens": token_texts(m.tokenizer, ids),
            "labels": run_labels(runs), "runs": runs,
            "n_layer": result["n_layer"], "top_tokens": top_tokens, "top_p": result["top_p"],
            "targets": [names[int(i)] for i in result["targets"]], "rank": result["rank"], "p": result["p"],
            "final_norm": lens.final_norm(m.model) is not None}
