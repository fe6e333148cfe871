"""Data and helpers for the attention and causal-mask pages.

Forward passes are cached with st.cache_data, keyed by model name + text + options; the model comes
from ui.model_loader by name, never hashed. Widgets that only pick a layer, head or colour re-slice
these results without another forward pass. The pages keep only reading widgets and drawing.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lab import attention, causal, hosting, hub, models
from lab.causal import TROPHY, TrophyError
from lab.text import encode, token_texts
from ui import url_state as link
from ui.i18n import lang, num, t
from ui.model_loader import get_model, model_cache
from viz import attention as viz

# The attention page keeps at most this many bytes of weights per text ([layer, head, T, T] float32,
# one layer at a time): GPT-2 small shows up to 721 tokens, GPT-2 XL 250.
MEMORY_BYTES = 300_000_000
BIG_ENCODER, SMALL_ENCODER = "roberta-base", "course-roberta"


@st.cache_data(max_entries=16, show_spinner=False)
def attention_view(model_name: str, text: str, start: int = 0) -> dict:
    """One forward pass over text, processed layer by layer: tokens, per-head summaries, the
    all-heads overview PNG and the weights of the heatmap window [start, start + HEATMAP_MAX).

    The text is cut at the model's context and at MEMORY_BYTES of weights (`cut` says which).
    """
    m = get_model(model_name)
    ids = encode(m.tokenizer, text)
    fits = min(m.context, attention.max_tokens(m.n_layer, m.n_head, MEMORY_BYTES))
    n_total, ids = len(ids), ids[:fits]
    cut = None if n_total <= fits else "context" if fits == m.context else "memory"
    w = slice(start, start + viz.HEATMAP_MAX)
    side = max(0, min(len(ids) - start, viz.HEATMAP_MAX))
    window = np.empty((m.n_layer, m.n_head, side, side), np.float32)  # (L, H, W, W)
    tiles = np.empty((m.n_layer, m.n_head, viz.OVERVIEW_CELL, viz.OVERVIEW_CELL))  # (L, H, cell, cell)
    summary = []
    for i, layer in enumerate(attention.attention_by_layer(m.model, ids)):  # (H, T, T), one at a time
        window[i] = layer[:, w, w]
        tiles[i] = [viz.overview_tile(head) for head in layer]
        summary += attention.layer_summary(layer, i)
    return {"ids": ids, "n_total": n_total, "cut": cut, "tokens": token_texts(m.tokenizer, ids),
            "summary": summary, "overview": viz.overview_image(tiles), "window": window,
            "split": attention.split(m.model, len(ids))}


@st.cache_data(max_entries=16, show_spinner=False)
def mask_view(model_name: str, text: str, causal_mask: bool) -> dict:
    """Scores and weights [L, H, T, T] and the next-token loss, with or without the causal mask,
    for at most HEATMAP_MAX tokens."""
    m = get_model(model_name)
    ids = encode(m.tokenizer, text)
    n_total, ids = len(ids), ids[:viz.HEATMAP_MAX]
    return {"ids": ids, "n_total": n_total, "tokens": token_texts(m.tokenizer, ids),
            **causal.view(m.model, ids, causal=causal_mask)}


@st.cache_data(max_entries=32, show_spinner=False)
def trophy(model_name: str, a: str, b: str, word: str, causal_mask: bool) -> dict:
    """lab.causal.trophy on the named model (one batched forward pass)."""
    m = get_model(model_name)
    return causal.trophy(m.model, m.tokenizer, a, b, word, causal=causal_mask)


def names() -> dict:
    """Chart and table titles in the UI language (viz.attention.NAMES keys)."""
    return {"query": "query", "key": "key", "query_axis": t("query (looking)", "query (quem olha)"),
            "key_axis": t("key (looked at)", "key (quem é olhado)"), "weight": t("weight", "peso"),
            "layer": t("layer", "camada"), "head": t("head", "cabeça"),
            "entropy": t("entropy (bits)", "entropia (bits)"), "previous": t("previous token", "token anterior"),
            "first": t("first token", "primeiro token"), "self": t("itself", "si mesmo"),
            "diff": t("max |difference|", "máx |diferença|"), "series": t("run", "execução")}


def summary_columns() -> dict:
    """st.dataframe column_config for the per-head table: short translated headers, 3 decimals
    (in Portuguese viz.attention.summary_shown has written them already, with a decimal comma)."""
    words = names()
    short = {"entropy": t("entropy", "entropia"), "previous": t("previous", "anterior"),
             "first": t("first", "primeiro"), "self": t("self", "próprio")}

    def column(label, c):
        if lang() == "pt":
            return st.column_config.TextColumn(label, help=words[c])
        return st.column_config.NumberColumn(label, format="%.3f", help=words[c])

    return {"layer": st.column_config.NumberColumn(words["layer"], width=56),
            "head": st.column_config.NumberColumn(words["head"], width=56),
            **{c: column(label, c) for c, label in short.items()}}


def pick_head(source: str, frame) -> None:
    """Widget callback: open the head clicked in the summary grid or selected in the table."""
    sel = st.session_state[source].selection
    rows = sel.get("pick") if source == "attn_grid" else [frame.iloc[i] for i in sel.get("rows", [])]
    if rows:
        st.session_state["attn_layer"], st.session_state["attn_head"] = int(rows[0]["layer"]), int(rows[0]["head"])


def cut_note(view: dict, m) -> str | None:
    """Why the attention page shows fewer tokens than the text has, or None."""
    n, total = len(view["ids"]), view["n_total"]
    if view["cut"] == "context":
        return t(f"{m.name} reads at most {num(m.context)} tokens: the first {num(n)} of {num(total)} are used.",
                 f"{m.name} lê no máximo {num(m.context)} tokens: usamos os primeiros {num(n)} de {num(total)}.")
    if view["cut"] == "memory":
        return t(f"First {num(n)} of {num(total)} tokens shown (memory): {m.n_layer} layers × {m.n_head} heads × "
                 f"{num(n)}² weights is as much as this page keeps.",
                 f"Primeiros {num(n)} de {num(total)} tokens mostrados (memória): {m.n_layer} camadas × {m.n_head} "
                 f"cabeças × {num(n)}² pesos é o máximo que esta página guarda.")
    return None


def load_pair() -> None:
    """Widget callback: fill the two sentences and the word from the chosen pair."""
    a, b, word = TROPHY[st.session_state["trophy_pair"]]
    st.session_state.update(trophy_a=a, trophy_b=b, trophy_word=word)


def pair_picker() -> None:
    """The trophy pair (English / Portuguese) that fills the sentence inputs, the Portuguese one explained.

    The pair, both sentences and the word keep what the reader typed across page switches and reruns
    that stop before drawing them (an emptied sentence above), and travel in the link; the pair
    starts in the UI language, the sentences and the word at the pair's.
    """
    pair = link.bind("trophy_pair", lang(), link.choice(["en", "pt"]))
    for key, default in zip(("trophy_a", "trophy_b", "trophy_word"), TROPHY[pair], strict=True):
        link.bind(key, default, link.text())
    pair = st.radio(t("Pair", "Par"), ["en", "pt"], format_func={"en": "English", "pt": "Português"}.get,
                    horizontal=True, key="trophy_pair", on_change=load_pair)
    if pair == "pt":
        st.caption(t("In Portuguese the pronoun would give the answer away: \"ele\" is the trophy (o troféu, "
                     "masculine), \"ela\" the suitcase (a mala, feminine). So the sentence leaves the subject "
                     "implicit, as Portuguese usually does, and the adjective agrees (\"pequena\" can only be the "
                     "suitcase). The word compared is the verb \"era\", the last word before the sentences differ.",
                     "Em português o pronome já entregaria a resposta: \"ele\" é o troféu, \"ela\" é a mala. Por "
                     "isso a frase omite o sujeito, como o português costuma fazer, e o adjetivo concorda "
                     "(\"pequena\" só pode ser a mala). Comparamos o verbo \"era\", a última palavra antes de as "
                     "frases divergirem."))


def loss_without_mask(views: dict) -> None:
    """The next-token loss without the mask against with it (views: mask on/off -> mask_view), explained."""
    if False not in views or views[True]["loss"] is None:
        return
    a, b = views[True]["loss"], views[False]["loss"]
    delta = ("+" if b >= a else "") + num(b - a, 3)
    st.metric(t("Next-token loss without the mask (nats)", "Perda do próximo token sem a máscara (nats)"),
              num(b, 3), f"{delta} " + t(f"vs {num(a, 3)} with it", f"vs {num(a, 3)} com ela"), delta_color="off")  # neither direction is "better": see the caption
    st.caption(t("Without the mask each position can also see the very token it must predict, so this loss "
                 "stops being an honest score: lower means leakage, not skill; higher means the model, trained "
                 "with the mask, never learned to read the future.",
                 "Sem a máscara cada posição também vê o próprio token que deve prever, então esta perda deixa "
                 "de ser uma medida honesta: menor é vazamento, não habilidade; maior mostra que o modelo, "
                 "treinado com a máscara, nunca aprendeu a ler o futuro."))


def default_encoder() -> str:
    """roberta-base when it is downloaded and fits in the model cache beside the models held now
    (so it never pushes the decoder out and back in on every rerun); otherwise the course encoder."""
    cache = model_cache()
    if not hub.is_available(BIG_ENCODER) or not hosting.offered(BIG_ENCODER):
        return SMALL_ENCODER
    if BIG_ENCODER in cache or cache.used_bytes + models.estimate_bytes(BIG_ENCODER) <= cache.budget:
        return BIG_ENCODER
    return SMALL_ENCODER


def trophy_series(decoder: str, encoder: str, a: str, b: str, word: str, masks) -> dict[str, list[float]]:
    """Per-layer max |difference| of the word's row: the decoder with each mask setting, then the encoder.

    Raises ValueError (TrophyError, a model that cannot load) with a message for the page to show.
    """
    series = {}
    for on in masks:
        label = t("decoder, mask on", "decoder, com máscara") if on else t("decoder, mask off", "decoder, sem máscara")
        series[label] = trophy(decoder, a, b, word, on)["per_layer"]
    if hub.is_available(encoder):
        series[f"encoder ({encoder})"] = trophy(encoder, a, b, word, False)["per_layer"]
    else:
        st.info(t(f"{encoder} is not downloaded here: pick it once in the sidebar to download it.",
                  f"{encoder} não está baixado aqui: escolha-o uma vez na barra lateral para baixá-lo."))
    return series


def problem_text(e: Exception) -> str:
    """The reason two sentences cannot be compared, in the UI language (from TrophyError's details)."""
    if lang() != "pt" or not isinstance(e, TrophyError):
        return str(e)
    d = e.details
    if e.reason == "empty_word":
        return "a palavra a comparar está vazia"
    if e.reason == "empty_text":
        return "as duas frases precisam de algum texto"
    if e.reason == "missing":
        which = {"sentence a": "na frase A", "sentence b": "na frase B"}.get(d["which"], "na frase")
        return f"a palavra {d['word']!r} não está {which} ({d['short']!r})"
    if e.reason == "differ":
        return (f"as frases divergem antes de {d['word']!r} (token {d['token']}: {d['a']!r} vs {d['b']!r}); "
                "elas precisam ter os mesmos tokens até a palavra, inclusive")
    if e.reason == "too_long":
        return f"{num(d['tokens'])} tokens é mais do que o contexto do modelo ({num(d['context'])} tokens)"
    return str(e)


def show_problem(e: Exception) -> None:
    """A message that may quote the reader's sentences: a fixed warning, then the text as plain text
    (st.text: no Markdown, no HTML), so `**`, `$` or `:red[...]` in a sentence stay as typed."""
    st.warning(t("These sentences cannot be compared:", "Não dá para comparar estas frases:"))
    st.text(problem_text(e))
