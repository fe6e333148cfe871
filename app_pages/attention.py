"""Attention, head by head: every layer and head of one forward pass (chapters 03 and 04)."""

import streamlit as st

from lab.attention import labels
from lab.causal import TROPHY
from ui.attention_data import attention_view
from ui.i18n import lang, t
from ui.model_loader import current_model
from viz import attention as viz

st.title(t("Attention, head by head", "Atenção, cabeça por cabeça"))
st.write(t("Each token asks a question (query) of every token it may see (keys) and takes a weighted mix "
           "of their values. Every row of a head sums to 1: a fixed budget. Here is every head of every "
           "layer, from one forward pass over your text.",
           "Cada token faz uma pergunta (query) a cada token que pode ver (keys) e leva uma mistura "
           "ponderada dos valores deles. Cada linha de uma cabeça soma 1: um orçamento fixo. Aqui está "
           "cada cabeça de cada camada, de uma única passada do modelo pelo seu texto."))
m = current_model()
text = st.text_area(t("Text", "Texto"), TROPHY[lang()][0], key="attn_text", height=80)
if not text.strip():
    st.info(t("Type some text to see its attention.", "Digite um texto para ver a atenção dele."))
    st.stop()

start = 0
first = attention_view(m.name, text)
n = len(first["ids"])
if first["n_total"] > n:
    st.warning(t(f"{m.name} reads at most {m.context} tokens: the first {n} of {first['n_total']} are used.",
                 f"{m.name} lê no máximo {m.context} tokens: usamos os primeiros {n} de {first['n_total']}."))
if n > viz.HEATMAP_MAX:
    start = st.slider(t("Heatmap window starts at token", "A janela do mapa começa no token"),
                      0, n - viz.HEATMAP_MAX, 0, key="attn_start")
data = attention_view(m.name, text, start) if start else first
s = data["split"]
st.markdown(t(f"**Split:** {s['n_embd']} = {s['n_head']} heads × {s['head_dim']} dimensions; {s['n_layer']} layers, "
              f"{n} tokens. Each layer: x {tuple(s['x'])} → Q, K, V each {tuple(s['q'])} → scores {tuple(s['scores'])}.",
              f"**Divisão:** {s['n_embd']} = {s['n_head']} cabeças × {s['head_dim']} dimensões; {s['n_layer']} camadas, "
              f"{n} tokens. Cada camada: x {tuple(s['x'])} → Q, K, V, cada um {tuple(s['q'])} → scores {tuple(s['scores'])}."))

for key, size in (("attn_layer", s["n_layer"]), ("attn_head", s["n_head"])):
    if st.session_state.get(key, 0) >= size:  # another model with fewer layers or heads
        st.session_state[key] = 0
frame = viz.summary_frame(data["summary"])


def pick(source: str) -> None:
    """Open the head clicked in the summary grid or selected in the table."""
    sel = st.session_state[source].selection
    rows = sel.get("pick") if source == "attn_grid" else [frame.iloc[i] for i in sel.get("rows", [])]
    if rows:
        st.session_state["attn_layer"], st.session_state["attn_head"] = int(rows[0]["layer"]), int(rows[0]["head"])


left, right = st.columns([3, 2])
with right:
    st.subheader(t("All heads", "Todas as cabeças"))
    st.image(data["overview"], caption=t("Rows: layers; columns: heads. Each head scaled to its own maximum.",
                                         "Linhas: camadas; colunas: cabeças. Cada cabeça na sua própria escala."))
    metric = st.radio(t("Colour by", "Cor por"), ["previous", "first", "self", "entropy"], horizontal=True,
                      key="attn_metric")
    st.altair_chart(viz.summary_grid(frame, metric), key="attn_grid", on_select=lambda: pick("attn_grid"),
                    width="content")
    st.caption(t("Click a cell, or a row below, to open that head. Click a column to sort: \"previous\" "
                 "finds the previous-token heads.", "Clique numa célula, ou numa linha abaixo, para abrir a "
                 "cabeça. Clique numa coluna para ordenar: \"previous\" acha as cabeças do token anterior."))
    st.dataframe(frame, key="attn_table", on_select=lambda: pick("attn_table"), selection_mode="single-row",
                 hide_index=True, height=240, column_config={c: st.column_config.NumberColumn(format="%.3f")
                                                              for c in ("entropy", "previous", "first", "self")})
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
    window_labels = labels(data["tokens"])[start:start + shown]
    st.altair_chart(viz.heatmap(data["window"][layer, head], window_labels, offset=start,
                                title=t(f"Layer {layer}, head {head}", f"Camada {layer}, cabeça {head}")), width="content")
