"""What the sampling page draws (chapter 07): its settings widgets, the streamed generation and one step's
distribution; ui.cached.sampling computes.

The main generation is streamed token by token into a placeholder; what it has drawn so far lives in
this session's state under its (model, prompt, settings) key, so reruns and view changes (picking a
token to inspect) reuse it, the Stop button keeps what was drawn, and leaving the page mid-way simply
abandons the generator (a later visit draws again: same seed, same text).
"""

from __future__ import annotations

import time
from contextlib import closing

import streamlit as st

from lab import sampling
from lab.errors import LabError
from lab.text import readable, token_texts
from ui import exports, messages, url_state, widgets
from ui.cached.sampling import Settings
from ui.i18n import lang, num, t
from ui.limits import new_tokens, new_tokens_note
from ui.runs import sampling as replay
from ui.token_words import worded
from viz import sampling as viz

RESULTS = "samp_results"  # session key: {(model, prompt, settings): result}, the newest last
KEEP = 8  # streamed results kept per session
MAX_NEW = 128  # most new tokens the page generates
SEED_MAX = 2**31 - 1
FRAME_S = 0.05  # the stream redraws at most this often (the first token at once): a replay is not redrawn per token


def filters(prefix: str, defaults=(1.0, 50, 0.9), cols=None) -> tuple[float, int, float]:
    """Temperature, top-k and top-p widgets (keys prefix_temperature, ...): they cannot give bad values."""
    cols = cols or st.columns(3)
    temperature = widgets.Slider(f"{prefix}_temperature", t("Temperature (0 = greedy)", "Temperatura (0 = gulosa)"),
                                 0.0, 2.0, defaults[0], step=0.05, least=sampling.MIN_TEMPERATURE).draw(cols[0])
    top_k = widgets.Slider(f"{prefix}_top_k", t("Top-k (0 = off)", "Top-k (0 = desligado)"), 0, 200, defaults[1],
                           step=1).draw(cols[1])
    top_p = widgets.Slider(f"{prefix}_top_p", t("Top-p (1 = off)", "Top-p (1 = desligado)"), 0.01, 1.0, defaults[2],
                           step=0.01).draw(cols[2])
    return float(temperature), int(top_k), float(top_p)


def settings(room: int) -> Settings:
    """The page's settings widgets; `room` is how many tokens fit after the prompt (>= 1)."""
    temperature, top_k, top_p = filters("samp")
    c1, c2 = st.columns(2)
    seed = widgets.NumberInput("samp_seed", t("Seed", "Semente"), 0, SEED_MAX, 0, step=1).draw(c1)
    top = min(new_tokens(MAX_NEW), room)  # the hosted demo's cap, if lower
    url_state.cap("samp_n", top)  # less room: keep the length as long as it fits
    length = widgets.Slider("samp_n", t("New tokens", "Tokens novos"), 1, top, min(32, top))
    if top > 1:
        n = length.draw(c2)
    else:  # a one-value range: no slider, a caption instead; the bind still keeps the link's samp_n
        length.bind()
        n = 1
        c2.caption(t("Room for one new token only (context).", "Só cabe um token novo (contexto)."))
    with c2:
        new_tokens_note(MAX_NEW)
    return Settings(temperature, top_k, top_p, int(seed), int(n))


def text(tokens: list[dict], runs: list[dict], prompt: str = "", cursor: bool = False) -> str:
    """Generated text as HTML (viz.sampling.coloured_tokens): characters split across tokens read whole."""
    return viz.coloured_tokens(tokens, prompt, cursor, lang(), runs,
                               t("{n} tokens make this text", "{n} tokens formam este texto"))


def stream(m, prompt: str, ids: list[int], s: Settings, box) -> dict:
    """The main generation, drawn into the placeholder `box` token by token, kept in session state.

    A finished (or stopped) result is shown again without generating; one cut short by a rerun is
    kept as stopped when the Stop button caused the rerun, and drawn again from the start otherwise.
    """
    store = st.session_state.setdefault(RESULTS, {})
    key = (m.name, prompt, s.drawn())  # a greedy text is the same for every seed
    found = store.pop(key, None)
    if found is not None:
        store[key] = found  # the newest again (least recently used results go first)
    if found is not None and (found["done"] or st.session_state.get("samp_stop")):
        found["stopped"] = found["stopped"] or not found["done"]
        found["done"] = True
        found["runs"] = sampling.runs(m.tokenizer, found["tokens"])
        box.markdown(text(found["tokens"], found["runs"], prompt), unsafe_allow_html=True)
        return found
    result = {"ids": ids, "tokens": [], "steps": [], "runs": [], "done": False, "stopped": False}
    store[key] = result
    for old in list(store)[:-KEEP]:
        del store[old]
    box.markdown(text([], [], prompt, cursor=True), unsafe_allow_html=True)
    try:
        _streamed(m, prompt, ids, s, box, result)
    except LabError as e:  # the engine's queue is full, or this reader's generation failed: the others go on
        store.pop(key, None)
        st.warning(messages.text(e))
        result["stopped"] = True
    result["runs"] = sampling.runs(m.tokenizer, result["tokens"])
    result["done"] = True
    box.markdown(text(result["tokens"], result["runs"], prompt), unsafe_allow_html=True)
    return result


def waiting_words(ahead: int | None) -> str:
    """What a reader waiting on the shared engine reads: their place in its queue (lab.serving.shared.steps)."""
    if ahead is None:
        return t("Reading your prompt…", "Lendo o seu prompt…")
    if ahead == 0:
        return t("Yours is the next generation to start…", "A sua é a próxima geração a começar…")
    return t(f"Waiting: {num(ahead)} other readers' generations start before yours…",
             f"Esperando: {num(ahead)} gerações de outros leitores começam antes da sua…")


def _streamed(m, prompt: str, ids: list[int], s: Settings, box, result: dict) -> None:
    """Draw the generation into `box` as its steps come (the model runs once per link, in the model's shared engine:
    ui.runs.sampling); while it waits for the engine, the reader's place in its queue."""
    drawn = 0.0

    def waiting(ahead: int | None) -> None:
        box.caption(waiting_words(ahead))

    with closing(replay.steps(m, prompt, ids, s, on_wait=waiting)) as steps:
        for step in steps:
            result["steps"].append(step)
            result["tokens"].append({"id": step["id"], "token": token_texts(m.tokenizer, [step["id"]])[0],
                                     "p": step["p"]})
            if len(result["tokens"]) == 1 or time.monotonic() - drawn >= FRAME_S:  # a replay draws no frames
                result["runs"] = sampling.runs(m.tokenizer, result["tokens"])
                box.markdown(text(result["tokens"], result["runs"], prompt, cursor=True), unsafe_allow_html=True)
                drawn = time.monotonic()


def step(result: dict, i: int, top_p: float) -> None:
    """Step i's distribution: entropies, survivors, the stages chart and the cumulative curve."""
    chosen, tok = result["steps"][i], result["tokens"][i]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("Entropy, raw", "Entropia, bruta"), f"{num(chosen['entropy_raw'])} bits")
    c2.metric(t("Entropy, drawn from", "Entropia, no sorteio"), f"{num(chosen['entropy'])} bits")
    c3.metric(t("Tokens left", "Tokens que sobram"), f"{num(chosen['kept'])} / {num(chosen['vocab'])}")
    c4.metric(t("Drawn token", "Token sorteado"), viz.visible(worded(tok["token"], marked=True)),
              t(f"p {num(chosen['p'])} · raw rank {num(chosen['rank'] + 1)}",
                f"p {num(chosen['p'])} · posição bruta {num(chosen['rank'] + 1)}"), delta_color="off")
    words = names()
    texts = [worded(x, marked=True) for x in chosen["texts"]]  # a lone byte in words, never \\xc3
    stages = viz.stages_frame(chosen, texts, chosen["id"])
    exports.chart("sampling-stages", st, exports.later(viz.stages_chart, stages, words, lang()))
    st.caption(t(f"The {len(chosen['texts'])} most likely tokens before any filter, best first (1 is the argmax). "
                 f"Top-k left {num(chosen['kept_topk'])} tokens, top-p then {num(chosen['kept'])}; the drawn token "
                 "is orange. Each stage renormalises what survives.",
                 f"Os {len(chosen['texts'])} tokens mais prováveis antes de qualquer filtro, do melhor ao pior (1 é "
                 f"o argmax). O top-k deixou {num(chosen['kept_topk'])} tokens, o top-p depois {num(chosen['kept'])}; "
                 "o sorteado está em laranja. Cada etapa renormaliza o que sobra."))
    cumulative = viz.cumulative_frame(chosen, texts)
    exports.chart("sampling-cumulative", st, exports.later(viz.cumulative_chart, cumulative, top_p, words, lang()),
                  height=260)


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
