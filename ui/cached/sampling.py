"""What the sampling page computes (chapter 07); ui.draw.sampling draws its settings, the streamed
generation and a step's distribution.

Comparisons that are not streamed (a second setting, five seeds) are cached with st.cache_data, keyed
by model name + prompt + settings. The model comes from ui.model_loader by name, never hashed, and is
never changed.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from lab import sampling
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
def generation(model_name: str, prompt: str, s: Settings) -> dict:
    """A whole generation, not streamed (the comparisons): tokens and steps, as ui.draw.sampling.stream keeps them.
    Pass s.drawn() (one call per greedy text, whatever the seed)."""
    m = get_model(model_name)
    out = sampling.sample(m.model, m.tokenizer, prompt, s.n, s.temperature, s.top_k, s.top_p, s.seed)
    steps = [sampling.with_texts(x, m.tokenizer) for x in out["steps"]]
    return {"ids": out["ids"], "tokens": out["tokens"], "steps": steps,
            "runs": sampling.runs(m.tokenizer, out["tokens"]), "done": True, "stopped": False}
