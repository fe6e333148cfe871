"""What the sampling page computes (chapter 07); ui.draw.sampling draws its settings, the streamed
generation and a step's distribution.

Comparisons that are not streamed (a second setting, five seeds) are cached with st.cache_data, keyed
by model name + prompt + settings, and decoded in the model's shared engine (lab.serving.shared) with every other
reader's generations. The model comes from ui.model_loader by name, never hashed, and is
never changed. The main generation is streamed by ui.runs.sampling, which runs the model once per link and
hands its finished steps to `generation`'s cache, so later readers replay them.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from lab import sampling
from lab.serving import shared
from lab.text import encode, token_texts
from ui.model_loader import get_model


class Settings(NamedTuple):
    """Everything that decides a generation besides the model and prompt."""

    temperature: float
    top_k: int
    top_p: float
    seed: int
    n: int

    def drawn(self) -> Settings:
        """The settings that decide the text: greedy (temperature 0) never draws, so its seed is set to 0 there and
        a greedy text is generated once whatever the seed (a seed click leaves comparison B, greedy by default, as
        it was, and a greedy stream is shown again without a forward pass)."""
        return self._replace(seed=0) if self.temperature == 0 else self


@st.cache_data(max_entries=64, show_spinner=False)
def generation(model_name: str, prompt: str, s: Settings, _steps: list[dict] | None = None) -> dict:
    """A whole generation (the comparisons, and a streamed one once finished): tokens and steps, as
    ui.draw.sampling.stream keeps them. Pass s.drawn() (one call per greedy text, whatever the seed). `_steps`:
    a streamed run's finished steps handed over (not hashed: the key is the same), else generated here."""
    m = get_model(model_name)
    ids = encode(m.tokenizer, prompt, "prompt")
    if _steps is None:  # decoded in the model's shared engine, beside every other reader's generation
        steps = [sampling.with_texts(x, m.tokenizer) for x in shared.steps(m.model, ids, s.n, s.temperature, s.top_k,
                                                                            s.top_p, s.seed)]
    else:
        steps = _steps
    texts = token_texts(m.tokenizer, [x["id"] for x in steps])
    tokens = [{"id": x["id"], "token": tx, "p": x["p"]} for x, tx in zip(steps, texts, strict=True)]
    return {"ids": ids, "tokens": tokens, "steps": steps, "runs": sampling.runs(m.tokenizer, tokens), "done": True,
            "stopped": False}
