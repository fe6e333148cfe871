"""What the sampling page computes (chapter 07); ui.draw.sampling draws its settings, the streamed
generation and a step's distribution.

Comparisons that are not streamed (a second setting, five seeds) are cached with st.cache_data, keyed
by model name + prompt + settings. The model comes from ui.model_loader by name, never hashed, and is
never changed.

The main generation (`steps`) runs the model once per (model, prompt, settings) in this process, however
many readers open the link (issue 41: a class on one link). The first reader leads: lab.sampling draws
token by token and the reader streams it; readers arriving meanwhile follow the same steps as they come
(no model call of their own); when it finishes, the steps go into `_generation`'s cache and later readers
replay them from there. A leader that stops or leaves mid-way hands over: its followers take the whole
generation from `_generation`, computed once for all of them. The seed makes every path the same text.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import NamedTuple

import streamlit as st

from lab import sampling
from lab.text import encode, readable, token_texts
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
def _generation(model_name: str, prompt: str, s: Settings, _steps: list[dict] | None = None) -> dict:
    """The generation for (model, prompt, s): from `_steps` when a streamed run hands its finished steps over
    (not hashed: the key is the same), else generated here by lab.sampling."""
    m = get_model(model_name)
    if _steps is None:
        out = sampling.sample(m.model, m.tokenizer, prompt, s.n, s.temperature, s.top_k, s.top_p, s.seed)
        ids, done = out["ids"], [finish_step(x, m.tokenizer) for x in out["steps"]]
    else:
        ids, done = encode(m.tokenizer, prompt, "prompt"), _steps
    texts = token_texts(m.tokenizer, [x["id"] for x in done])
    tokens = [{"id": x["id"], "token": tx, "p": x["p"]} for x, tx in zip(done, texts, strict=True)]
    return {"ids": ids, "tokens": tokens, "steps": done, "runs": runs(m.tokenizer, tokens), "done": True,
            "stopped": False}


_LOCK = threading.Lock()
_LIVE: dict[tuple, dict] = {}  # (model, prompt, settings) -> {"steps": [...], "state": ...}: being streamed now
_DONE: OrderedDict[tuple, float] = OrderedDict()  # keys whose steps _generation holds -> _epoch() when stored
DONE_KEEP = 256


@st.cache_data(show_spinner=False)
def _epoch() -> float:
    """A value that changes whenever Streamlit's data caches are cleared: _DONE entries from before stop counting."""
    return time.monotonic()


def steps(m, prompt: str, ids: list[int], s: Settings) -> Iterator[dict]:
    """The main generation's steps (candidate texts added), one at a time as they are drawn, for the page to
    stream; the model runs once per key in this process (the module docstring). Close the iterator when
    leaving it early, so a leader's followers are handed over at once."""
    key, epoch = (m.name, prompt, drawn_by(s)), _epoch()
    with _LOCK:
        replay = _DONE.get(key) == epoch
        live = None if replay else _LIVE.get(key)
        lead = not replay and live is None
        if lead:
            live = _LIVE[key] = {"steps": [], "state": "running"}
    if replay:
        yield from generation(m.name, prompt, s)["steps"]
    elif lead:
        yield from _lead(m, prompt, ids, s, key, live, epoch)
    else:
        yield from _follow(m.name, prompt, s, live)


def _lead(m, prompt: str, ids: list[int], s: Settings, key: tuple, live: dict, epoch: float) -> Iterator[dict]:
    """Generate with lab.sampling, sharing each step with the followers; store the finished steps."""
    try:
        for step in sampling.steps(m.model, ids, s.n, s.temperature, s.top_k, s.top_p, s.seed):
            live["steps"].append(finish_step(step, m.tokenizer))
            yield live["steps"][-1]
        _generation(m.name, prompt, drawn_by(s), _steps=live["steps"])
        with _LOCK:
            _DONE[key] = epoch
            _DONE.move_to_end(key)
            while len(_DONE) > DONE_KEEP:
                _DONE.popitem(last=False)
        live["state"] = "done"
    finally:
        if live["state"] != "done":
            live["state"] = "abandoned"
        with _LOCK:
            if _LIVE.get(key) is live:
                del _LIVE[key]


def _follow(model_name: str, prompt: str, s: Settings, live: dict, poll_s: float = 0.02) -> Iterator[dict]:
    """The leader's steps as they come; the rest from _generation if the leader stops or leaves."""
    i = 0
    while True:
        state = live["state"]  # read before the steps: "done" means every step is in the list already
        while i < len(live["steps"]):
            i += 1
            yield live["steps"][i - 1]
        if state == "done":
            return
        if state == "abandoned":
            yield from generation(model_name, prompt, s)["steps"][i:]
            return
        time.sleep(poll_s)


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
