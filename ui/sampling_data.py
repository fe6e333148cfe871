"""Data and widgets for the sampling page (chapter 07): settings, the streamed generation, comparisons.

The main generation is streamed token by token into a placeholder; what it has drawn so far lives in
this session's state under its (model, prompt, settings) key, so reruns and view changes (picking a
token to inspect) reuse it, the Stop button keeps what was drawn, and leaving the page mid-way simply
abandons the generator (a later visit draws again: same seed, same text). Comparisons that are not
streamed (a second setting, five seeds) are cached with st.cache_data, keyed by model name + prompt +
settings. The model comes from ui.model_loader by name, never hashed, and is never changed.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from lab import sampling
from lab.text import token_texts
from ui import exports
from ui import url_state as link
from ui.i18n import lang, num, t
from ui.limits import new_tokens, new_tokens_note
from ui.model_loader import get_model
from viz import sampling as viz

RESULTS = "samp_results"  # session key: {(model, prompt, settings): result}, the newest last
KEEP = 8  # streamed results kept per session
MAX_NEW = 128  # most new tokens the page generates
SEED_MAX = 2**31 - 1


class Settings(NamedTuple):
    """Everything that decides a generation besides the model and prompt."""

    temperature: float
    top_k: int
    top_p: float
    seed: int
    n: int


def filters(prefix: str, defaults=(1.0, 50, 0.9), cols=None) -> tuple[float, int, float]:
    """Temperature, top-k and top-p widgets (keys prefix_temperature, ...): they cannot give bad values."""
    cols = cols or st.columns(3)
    codecs = (link.real(0.0, 2.0, least=sampling.MIN_TEMPERATURE), link.integer(0, 200),
              link.real(0.01, 1.0))  # the sliders' ranges
    for key, default, codec in zip(("temperature", "top_k", "top_p"), defaults, codecs, strict=True):
        link.bind(f"{prefix}_{key}", default, codec)
    temperature = cols[0].slider(t("Temperature (0 = greedy)", "Temperatura (0 = gulosa)"), 0.0, 2.0, step=0.05,
                                 key=f"{prefix}_temperature")
    top_k = cols[1].slider(t("Top-k (0 = off)", "Top-k (0 = desligado)"), 0, 200, step=1, key=f"{prefix}_top_k")
    top_p = cols[2].slider(t("Top-p (1 = off)", "Top-p (1 = desligado)"), 0.01, 1.0, step=0.01, key=f"{prefix}_top_p")
    return float(temperature), int(top_k), float(top_p)


def settings(room: int) -> Settings:
    """The page's settings widgets; `room` is how many tokens fit after the prompt (>= 1)."""
    temperature, top_k, top_p = filters("samp")
    c1, c2 = st.columns(2)
    link.bind("samp_seed", 0, link.integer(0, SEED_MAX))
    seed = c1.number_input(t("Seed", "Semente"), 0, SEED_MAX, step=1, key="samp_seed")
    top = min(new_tokens(MAX_NEW), room)  # the hosted demo's cap, if lower
    for key in ("samp_n", "samp_n_saved"):  # less room: keep the length as long as it fits
        if st.session_state.get(key, 0) > top:
            st.session_state[key] = top
    link.bind("samp_n", min(32, top), link.integer(1, top))
    if top > 1:
        n = c2.slider(t("New tokens", "Tokens novos"), 1, top, key="samp_n")
    else:
        n = 1
        c2.caption(t("Room for one new token only (context).", "Só cabe um token novo (contexto)."))
    with c2:
        new_tokens_note(MAX_NEW)
    return Settings(temperature, top_k, top_p, int(seed), int(n))


def _finish(step: dict, tokenizer) -> dict:
    """A step as the page keeps it: candidate texts added."""
    step["texts"] = token_texts(tokenizer, step["candidates"]["id"])
    return step


@st.cache_data(max_entries=64, show_spinner=False)
def generation(model_name: str, prompt: str, s: Settings) -> dict:
    """A whole generation, not streamed (the comparisons): tokens and steps, as stream() keeps them."""
    m = get_model(model_name)
    out = sampling.sample(m.model, m.tokenizer, prompt, s.n, s.temperature, s.top_k, s.top_p, s.seed)
    return {"ids": out["ids"], "tokens": out["tokens"], "steps": [_finish(x, m.tokenizer) for x in out["steps"]],
            "done": True, "stopped": False}


def stream(m, prompt: str, ids: list[int], s: Settings, box) -> dict:
    """The main generation, drawn into the placeholder `box` token by token, kept in session state.

    A finished (or stopped) result is shown again without generating; one cut short by a rerun is
    kept as stopped when the Stop button caused the rerun, and drawn again from the start otherwise.
    """
    store = st.session_state.setdefault(RESULTS, {})
    key = (m.name, prompt, s)
    found = store.pop(key, None)
    if found is not None:
        store[key] = found  # the newest again (least recently used results go first)
    if found is not None and (found["done"] or st.session_state.get("samp_stop")):
        found["stopped"] = found["stopped"] or not found["done"]
        found["done"] = True
        box.markdown(viz.coloured_tokens(found["tokens"], prompt, lang=lang()), unsafe_allow_html=True)
        return found
    result = {"ids": ids, "tokens": [], "steps": [], "done": False, "stopped": False}
    store[key] = result
    for old in list(store)[:-KEEP]:
        del store[old]
    box.markdown(viz.coloured_tokens([], prompt, cursor=True, lang=lang()), unsafe_allow_html=True)
    for step in sampling.steps(m.model, ids, s.n, s.temperature, s.top_k, s.top_p, s.seed):
        result["steps"].append(_finish(step, m.tokenizer))
        result["tokens"].append({"id": step["id"], "token": token_texts(m.tokenizer, [step["id"]])[0], "p": step["p"]})
        box.markdown(viz.coloured_tokens(result["tokens"], prompt, cursor=True, lang=lang()), unsafe_allow_html=True)
    result["done"] = True
    box.markdown(viz.coloured_tokens(result["tokens"], prompt, lang=lang()), unsafe_allow_html=True)
    return result


def names() -> dict:
    """Chart words in the UI language (viz.sampling.NAMES keys)."""
    return {"raw": t("raw (T = 1)", "bruta (T = 1)"), "temperature": t("after temperature", "após a temperatura"),
            "top_k": t("after top-k", "após o top-k"), "top_p": t("after top-p (drawn from)", "após o top-p (sorteio)"),
            "sampled": t("sampled", "sorteado"), "argmax": t("argmax", "argmax"), "kept": t("kept", "mantido"),
            "removed": t("removed", "removido"), "p": t("probability", "probabilidade"), "token": "token",
            "stage": t("stage", "etapa"), "cumulative": t("cumulative probability", "probabilidade acumulada"),
            "top_p_line": "top-p"}


def pick_label(result: dict):
    """format_func for the token picker: position and the token's visible text."""
    return lambda i: f"{i + 1} {viz.visible(result['tokens'][i]['token'])}"


def step_view(result: dict, i: int, top_p: float) -> None:
    """Step i's distribution: entropies, survivors, the stages chart and the cumulative curve."""
    step, tok = result["steps"][i], result["tokens"][i]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("Entropy, raw", "Entropia, bruta"), f"{num(step['entropy_raw'])} bits")
    c2.metric(t("Entropy, drawn from", "Entropia, no sorteio"), f"{num(step['entropy'])} bits")
    c3.metric(t("Tokens left", "Tokens que sobram"), f"{num(step['kept'])} / {num(step['vocab'])}")
    c4.metric(t("Drawn token", "Token sorteado"), viz.visible(tok["token"]),
              t(f"p {num(step['p'])} · raw rank {num(step['rank'] + 1)}",
                f"p {num(step['p'])} · posição bruta {num(step['rank'] + 1)}"), delta_color="off")
    words = names()
    exports.chart("sampling-stages", st, viz.stages_chart(viz.stages_frame(step, step["texts"], step["id"]), words, lang()))
    st.caption(t(f"The {len(step['texts'])} most likely tokens before any filter, best first (1 is the argmax). "
                 f"Top-k left {num(step['kept_topk'])} tokens, top-p then {num(step['kept'])}; the drawn token is "
                 "orange. Each stage renormalises what survives.",
                 f"Os {len(step['texts'])} tokens mais prováveis antes de qualquer filtro, do melhor ao pior (1 é o "
                 f"argmax). O top-k deixou {num(step['kept_topk'])} tokens, o top-p depois {num(step['kept'])}; o "
                 "sorteado está em laranja. Cada etapa renormaliza o que sobra."))
    exports.chart("sampling-cumulative", st, viz.cumulative_chart(viz.cumulative_frame(step, step["texts"]), top_p, words, lang()), height=260)


def problem_text(e: sampling.SamplingError) -> str:
    """Why the page cannot sample this prompt, in the UI language."""
    if e.reason == "too_long":
        n, c = num(e.details["tokens"]), num(e.details["context"])
        return t(f"The prompt is {n} tokens: no room is left in the model's context of {c}.",
                 f"O prompt tem {n} tokens: não sobra espaço no contexto do modelo, de {c}.")
    return t("Type a prompt to continue.", "Digite um prompt para continuar.")


def variety(results: list[dict]) -> str:
    """How many different texts a list of generations gave, in words."""
    distinct = len({tuple(x["id"] for x in r["tokens"]) for r in results})
    return t(f"{distinct} different texts out of {len(results)}.", f"{distinct} textos diferentes de {len(results)}.")
