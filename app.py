"""Entry point: page config, the shared sidebar, and navigation over the pages."""

import streamlit as st

from ui import sidebar
from ui.i18n import t

st.set_page_config(page_title="GPT-2, taken apart", page_icon="🔬", layout="wide")

pages = [
    st.Page("app_pages/home.py", title=t("Home", "Início"), icon="🏠", default=True),
    st.Page("app_pages/tokens.py", title=t("Tokenization costs", "Custo da tokenização"), icon="🔤"),
    st.Page("app_pages/analogies.py", title=t("Embedding analogies", "Analogias de embeddings"), icon="🧭"),
    st.Page("app_pages/attention.py", title=t("Attention heads", "Cabeças de atenção"), icon="👀"),
    st.Page("app_pages/causal_mask.py", title=t("The causal mask", "A máscara causal"), icon="🎭"),
    st.Page("app_pages/logit_lens.py", title=t("Logit lens", "Lente dos logits"), icon="🔭"),
    st.Page("app_pages/perplexity.py", title=t("Perplexity", "Perplexidade"), icon="📉"),
    st.Page("app_pages/sampling.py", title=t("Sampling", "Amostragem"), icon="🎲"),
]
nav = st.navigation(pages)
sidebar.draw()
nav.run()
