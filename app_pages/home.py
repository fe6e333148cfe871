"""Home: what each page shows and which chapter of the course it serves."""

import streamlit as st

from ui.i18n import t

st.title(t("GPT-1 and GPT-2, taken apart — the explorer", "GPT-1 e GPT-2, desmontados — o explorador"))
st.write(t(
    "A companion to the course: every page runs a real tokenizer or a real model on text you "
    "choose, so you can see what a chapter explains. Every number here can be reproduced from "
    "the shell with `python -m lab` (chapter 15, the lab guide).",
    "Um complemento do curso: cada página roda um tokenizador ou um modelo de verdade sobre o "
    "texto que você escolher, para você ver o que cada capítulo explica. Todo número daqui pode "
    "ser reproduzido no terminal com `python -m lab` (capítulo 15, o guia do laboratório).",
))

# (page file, title en, title pt, chapters (a tuple), what it shows en, pt) — only pages that exist.
PAGES = [
    ("app_pages/tokens.py", "Tokenization costs", "Custo da tokenização", ("01",),
     "GPT-2's tokenizer against cl100k_base and o200k_base on Portuguese and English: tokens per "
     "word, the Portuguese premium, what it costs in a context window.",
     "O tokenizador do GPT-2 contra cl100k_base e o200k_base em português e inglês: tokens por "
     "palavra, o ágio do português, o que isso custa numa janela de contexto."),
    ("app_pages/attention.py", "Attention heads", "Cabeças de atenção", ("03", "04"),
     "Every head of every layer on your text: one head as a heatmap, all heads at a glance, and a sortable "
     "table that finds the previous-token heads; the split into heads (768 = 12 × 64 in GPT-2 small) read from the model.",
     "Todas as cabeças de todas as camadas sobre o seu texto: uma cabeça como mapa de calor, todas de uma "
     "vez, e uma tabela ordenável que acha as cabeças do token anterior; a divisão em cabeças (768 = 12 × 64 no "
     "GPT-2 small) lida do modelo."),
    ("app_pages/causal_mask.py", "The causal mask", "A máscara causal", ("04", "11"),
     "Scores with −∞ above the diagonal, exact zeros after the softmax, the same model without its mask; "
     "the trophy experiment (difference exactly 0.0) beside an encoder.",
     "Scores com −∞ acima da diagonal, zeros exatos depois do softmax, o mesmo modelo sem a máscara; o "
     "experimento do troféu (diferença exatamente 0,0) ao lado de um encoder."),
]

for path, title_en, title_pt, chapters, what_en, what_pt in PAGES:
    with st.container(border=True):
        which = t("chapters", "capítulos") if len(chapters) > 1 else t("chapter", "capítulo")
        listed = t(" and ", " e ").join(chapters)
        st.page_link(path, label=f"**{t(title_en, title_pt)}** · {which} {listed}")
        st.write(t(what_en, what_pt))
