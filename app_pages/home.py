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
    ("app_pages/analogies.py", "Embedding analogies", "Analogias de embeddings", ("02",),
     "king − man + woman over the input embeddings, measured: the inputs left out (or not), the expected "
     "word's rank both ways, words that are several tokens, nearest neighbours, and a 2D picture that says how "
     "much it hides.",
     "rei − homem + mulher sobre os embeddings de entrada, medido: as de entrada excluídas (ou não), a posição "
     "da palavra esperada dos dois jeitos, palavras de vários tokens, vizinhos mais próximos e um retrato 2D "
     "que diz quanto esconde."),
    ("app_pages/attention.py", "Attention heads", "Cabeças de atenção", ("03", "04"),
     "Every head of every layer on your text: one head as a heatmap, all heads at a glance, and a sortable "
     "table that finds the previous-token heads; the split into heads (768 = 12 × 64 in GPT-2 small) read from "
     "the model.",
     "Todas as cabeças de todas as camadas sobre o seu texto: uma cabeça como mapa de calor, todas de uma "
     "vez, e uma tabela ordenável que acha as cabeças do token anterior; a divisão em cabeças (768 = 12 × 64 no "
     "GPT-2 small) lida do modelo."),
    ("app_pages/causal_mask.py", "The causal mask", "A máscara causal", ("04", "11"),
     "Scores with −∞ above the diagonal, exact zeros after the softmax, the same model without its mask; "
     "the trophy experiment (difference exactly 0.0) beside an encoder.",
     "Scores com −∞ acima da diagonal, zeros exatos depois do softmax, o mesmo modelo sem a máscara; o "
     "experimento do troféu (diferença exatamente 0,0) ao lado de um encoder."),
    ("app_pages/logit_lens.py", "Logit lens", "Lente dos logits", ("05",),
     "Every layer read out as if it were the last: a grid of each floor's guess for the next token, and one "
     "token followed up the layers, where its answer appears and where it settles.",
     "Cada camada lida como se fosse a última: uma grade com o palpite de cada andar para o próximo token, e um "
     "token seguido pelas camadas, onde a resposta aparece e onde ela se firma."),
    ("app_pages/perplexity.py", "Perplexity", "Perplexidade", ("06", "08", "09"),
     "One text, several models: perplexity per token, and the same likelihood per byte and per word so that "
     "models with different tokenizers compare fairly; which tokens surprised which model; what scale buys, "
     "offline, across three course decoders that differ only in size.",
     "Um texto, vários modelos: perplexidade por token, e a mesma verossimilhança por byte e por palavra para "
     "comparar com justiça modelos de tokenizadores diferentes; quais tokens surpreenderam qual modelo; o que a "
     "escala compra, offline, em três decoders do curso que só diferem no tamanho."),
    ("app_pages/sampling.py", "Sampling", "Amostragem", ("07",),
     "Temperature, top-k, top-p and the seed: the next-token distribution stage by stage, generation streamed "
     "token by token, two settings side by side and five seeds.",
     "Temperatura, top-k, top-p e a semente: a distribuição do próximo token etapa por etapa, a geração token a "
     "token, duas configurações lado a lado e cinco sementes."),
    ("app_pages/detector.py", "The detector", "O detector", ("12",),
     "A language model read as an AI-text detector: your text coloured by how expected each token was (GLTR), "
     "Fast-DetectGPT and Binoculars, measured on a labelled set; a threshold, its false accusations by language "
     "and length, and what base rates do to a verdict.",
     "Um modelo de linguagem lido como detector de texto de IA: o seu texto colorido por quão esperado era cada "
     "token (GLTR), Fast-DetectGPT e Binoculars, medidos num conjunto rotulado; um limiar, as acusações falsas por "
     "idioma e tamanho, e o que a taxa de base faz com um veredito."),
]

for path, title_en, title_pt, chapters, what_en, what_pt in PAGES:
    with st.container(border=True):
        which = t("chapters", "capítulos") if len(chapters) > 1 else t("chapter", "capítulo")
        listed = t(" and ", " e ").join(chapters)
        st.page_link(path, label=f"**{t(title_en, title_pt)}** · {which} {listed}")
        st.write(t(what_en, what_pt))
