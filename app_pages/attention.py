"""Attention, head by head: every layer and head of one forward pass (chapters 03 and 04)."""

import streamlit as st

from lab.causal import TROPHY
from ui import presentation, widgets
from ui.cached import attention as cached
from ui.draw import attention as draw
from ui.draw import reproduce
from ui.i18n import lang, t
from ui.model_loader import current_model
from viz import attention as viz

st.title(t("Attention, head by head", "Atenção, cabeça por cabeça"))
presentation.explain(t(
    "Each token asks a question (query) of every token it may see (keys) and takes a weighted mix "
    "of their values. Every row of a head sums to 1: a fixed budget. Here is every head of every "
    "layer, from one forward pass over your text.",
    "Cada token faz uma pergunta (query) a cada token que pode ver (keys) e leva uma mistura "
    "ponderada dos valores deles. Cada linha de uma cabeça soma 1: um orçamento fixo. Aqui está "
    "cada cabeça de cada camada, de uma única passada do modelo pelo seu texto."))
m = current_model()
text = widgets.Text("attn_text", t("Text", "Texto"), TROPHY[lang()][0], height=80).draw()
if not text.strip():
    st.info(t("Type some text to see its attention.", "Digite um texto para ver a atenção dele."))
    st.stop()

first = cached.attention_view(m.name, text)
n, start = len(first["ids"]), 0
if note := draw.cut_note(first, m):
    st.warning(note)
if n > viz.HEATMAP_MAX:
    start = widgets.Slider("attn_start", t("Heatmap window starts at token", "A janela do mapa começa no token"),
                           0, n - viz.HEATMAP_MAX, 0).draw()
view = cached.attention_view(m.name, text, start) if start else first
s, words = view["split"], draw.names()
st.markdown(t(
    f"**Split:** {s['n_embd']} = {s['n_head']} heads × {s['head_dim']} dimensions; {s['n_layer']} layers, "
    f"{n} tokens. Each layer: x {tuple(s['x'])} → Q, K, V each {tuple(s['q'])} → scores {tuple(s['scores'])}.",
    f"**Divisão:** {s['n_embd']} = {s['n_head']} cabeças × {s['head_dim']} dimensões; {s['n_layer']} camadas, "
    f"{n} tokens. Cada camada: x {tuple(s['x'])} → Q, K, V, cada um {tuple(s['q'])} → scores {tuple(s['scores'])}."))
draw.quoted_split(s, m.name)  # gpt2: chapter 04's 12 x 64 beside this copy's
layer = widgets.Choice("attn_layer", t("Layer", "Camada"), range(s["n_layer"]), 0)  # ranges of the model just loaded
head = widgets.Choice("attn_head", t("Head", "Cabeça"), range(s["n_head"]), 0)
metric = widgets.Choice("attn_metric", t("Colour by", "Cor por"), ["previous", "first", "self", "entropy"],
                        "previous", kind="radio", format_func=words.get, horizontal=True)
widgets.bind_all(layer, head, metric)  # before either column: the right one (drawn first) opens heads on the left
frame = viz.summary_frame(view["summary"])

left, right = presentation.stacking("attention").columns([3, 2])
with right, presentation.view("all_heads"):
    by = draw.all_heads(view, frame, metric, words)
with left, presentation.view("head"):
    draw.one_head(view, frame, layer, head, start, words, by)
reproduce.command(["attention", "--json", "--model", m.name, "--text", text])  # chapter 15: this view from the shell
