"""Attention, head by head: every layer and head of one forward pass (chapters 03 and 04)."""

import streamlit as st

from lab.causal import TROPHY
from lab.text import labels
from ui import attention_data as data
from ui import exports, presentation
from ui import url_state as link
from ui.i18n import lang, t
from ui.limits import cap_text
from ui.model_loader import current_model
from viz import attention as viz

st.title(t("Attention, head by head", "Atenção, cabeça por cabeça"))
presentation.explain(t("Each token asks a question (query) of every token it may see (keys) and takes a weighted mix "
           "of their values. Every row of a head sums to 1: a fixed budget. Here is every head of every "
           "layer, from one forward pass over your text.",
           "Cada token faz uma pergunta (query) a cada token que pode ver (keys) e leva uma mistura "
           "ponderada dos valores deles. Cada linha de uma cabeça soma 1: um orçamento fixo. Aqui está "
           "cada cabeça de cada camada, de uma única passada do modelo pelo seu texto."))
m = current_model()
link.bind("attn_text", TROPHY[lang()][0], link.text())
text = st.text_area(t("Text", "Texto"), key="attn_text", height=80, max_chars=cap_text("attn_text"))
if not text.strip():
    st.info(t("Type some text to see its attention.", "Digite um texto para ver a atenção dele."))
    st.stop()

first = data.attention_view(m.name, text)
n, start = len(first["ids"]), 0
if note := data.cut_note(first, m):
    st.warning(note)
if n > viz.HEATMAP_MAX:
    link.bind("attn_start", 0, link.integer(0, n - viz.HEATMAP_MAX))
    start = st.slider(t("Heatmap window starts at token", "A janela do mapa começa no token"),
                      0, n - viz.HEATMAP_MAX, key="attn_start")
view = data.attention_view(m.name, text, start) if start else first
s, words = view["split"], data.names()
st.markdown(t(f"**Split:** {s['n_embd']} = {s['n_head']} heads × {s['head_dim']} dimensions; {s['n_layer']} layers, "
              f"{n} tokens. Each layer: x {tuple(s['x'])} → Q, K, V each {tuple(s['q'])} → scores {tuple(s['scores'])}.",
              f"**Divisão:** {s['n_embd']} = {s['n_head']} cabeças × {s['head_dim']} dimensões; {s['n_layer']} camadas, "
              f"{n} tokens. Cada camada: x {tuple(s['x'])} → Q, K, V, cada um {tuple(s['q'])} → scores {tuple(s['scores'])}."))
link.bind("attn_layer", 0, link.integer(0, s["n_layer"] - 1))  # ranges of the model just loaded
link.bind("attn_head", 0, link.integer(0, s["n_head"] - 1))
link.bind("attn_metric", "previous", link.choice(["previous", "first", "self", "entropy"]))
frame = viz.summary_frame(view["summary"])

left, right = presentation.stacking("attention").columns([3, 2])
with right:
    st.subheader(t("All heads", "Todas as cabeças"))
    st.image(view["overview"], caption=t("Rows: layers; columns: heads. Each head scaled to its own maximum.",
                                         "Linhas: camadas; colunas: cabeças. Cada cabeça na sua própria escala."))
    exports.image("attention-overview", st, view["overview"])
    metric = st.radio(t("Colour by", "Cor por"), ["previous", "first", "self", "entropy"], format_func=words.get,
                      horizontal=True, key="attn_metric")
    exports.chart("head-summary", st, viz.summary_grid(frame, metric, names=words, lang=lang()), key="attn_grid", width="content",
                    on_select=lambda: data.pick_head("attn_grid", frame))
    st.caption(t("Click a cell to open that head.", "Clique numa célula para abrir a cabeça."))
with left:
    c1, c2 = st.columns(2)
    layer = c1.selectbox(t("Layer", "Camada"), range(s["n_layer"]), key="attn_layer")
    head = c2.selectbox(t("Head", "Cabeça"), range(s["n_head"]), key="attn_head")
    shown = min(n - start, viz.HEATMAP_MAX)
    if n > viz.HEATMAP_MAX:
        st.caption(t(f"The heatmap shows tokens {start}–{start + shown - 1} of {n} (at most {viz.HEATMAP_MAX} stay "
                     "legible); the overview and the table cover them all.",
                     f"O mapa mostra os tokens {start}–{start + shown - 1} de {n} (no máximo {viz.HEATMAP_MAX} "
                     "ficam legíveis); a visão geral e a tabela cobrem todos."))
    exports.chart("attention-head", st, viz.heatmap(view["window"][layer, head], labels(view["tokens"])[start:start + shown], offset=start,
                                title=t(f"Layer {layer}, head {head}", f"Camada {layer}, cabeça {head}"),
                                names=words, lang=lang()))  # fills its column, never spills into the next
    st.caption(t("Every head, one row each: click a row to open it; click a column to sort (\"previous\" finds the "
                 "previous-token heads).", "Cada cabeça, uma linha: clique numa linha para abri-la; clique numa "
                 "coluna para ordenar (\"anterior\" acha as cabeças do token anterior)."))
    st.dataframe(viz.summary_shown(frame, lang()), key="attn_table", on_select=lambda: data.pick_head("attn_table", frame),
                 selection_mode="single-row", hide_index=True, height=240, column_config=data.summary_columns())
