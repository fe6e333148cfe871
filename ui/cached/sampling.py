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
from lab.text import readable, token_texts
from ui.i18n import t
from ui.model_loader import get_model
from viz import sampling as viz


class Settings(NamedTuple):
    """Everything that decides a generation besides the model and prompt."""

    temperature: float
    top_k: int
    top_p: float
    seed: int
    n: int


def drawn_by(s: Settings) -> Settings:
    """The settings that decide the text: greedy (temperature 0) never draws, so its seed is set to 0 there and
    a greedy text is generated once whatever the seed (a seed click leaves comparison B, greedy by default, as
    it was, and a greedy stream is shown again without a forward pass)."""
    return s._replace(seed=0) if s.temperature == 0 else s


def finish_step(step: dict, tokenizer) -> dict:
    """A step as the page keeps it: candidate texts added."""
    step["texts"] = token_texts(tokenizer, step["candidates"]["id"])
    return step


def generation(model_name: str, prompt: str, s: Settings) -> dict:
    """A whole generation, not streamed (the comparisons): tokens and steps, as ui.draw.sampling.stream keeps them.
    Keyed by drawn_by(s) (one call per greedy text, whatever the seed)."""
    return _generation(model_name, prompt, drawn_by(s))


@st.cache_data(max_entries=64, show_spinner=False)
def _generation(model_name: str, prompt: str, s: Settings) -> dict:
    m = get_model(model_name)
    out = sampling.sample(m.model, m.tokenizer, prompt, s.n, s.temperature, s.top_k, s.top_p, s.seed)
    return {"ids": out["ids"], "tokens": out["tokens"], "steps": [finish_step(x, m.tokenizer) for x in out["steps"]],
            "runs": runs(m.tokenizer, out["tokens"]), "done": True, "stopped": False}


def runs(tokenizer, tokens: list[dict]) -> list[dict]:
    """lab.text.readable over generated tokens: the runs that make whole characters (one chip each on the page)."""
    return readable(tokenizer, [x["id"] for x in tokens])


def names() -> dict:
    """Chart words in the UI language (viz.sampling.NAMES keys)."""
    return {"raw": t("raw (T = 1)", "bruta (T = 1)"), "temperature": t("after temperature", "após a temperatura"),
            "top_k": t("after top-k", "após o top-k"),
            "top_p": t("after top-p (drawn from)", "após o top-p (sorteio)"),
            "sampled": t("sampled", "sorteado"), "argmax": t("argmax", "argmax"), "kept": t("kept", "mantido"),
            "removed": t("removed", "removido"), "p": t("probability", "probabilidade"), "token": "token",
            "stage": t("stage", "etapa"), "cumulative": t("cumulative probability", "probabilidade acumulada"),
            "top_p_line": "top-p"}


def pick_label(result: dict, tokenizer):
    """format_func for the token picker: position and the token's visible text, a piece of a character split
    across tokens as that character and its part ("ã ·1/2")."""
    texts = []
    for run in readable(tokenizer, [x["id"] for x in result["tokens"]]):
        n = run["stop"] - run["start"]
        texts += [viz.visible(run["text"]) + (f" ·{k + 1}/{n}" if n > 1 else "") for k in range(n)]
    return lambda i: f"{i + 1} {texts[i]}"


def variety(results: list[dict]) -> str:
    """How many different texts a list of generations gave, in words."""
    distinct = len({tuple(x["id"] for x in r["tokens"]) for r in results})
    return t(f"{distinct} different texts out of {len(results)}.", f"{distinct} textos diferentes de {len(results)}.")
