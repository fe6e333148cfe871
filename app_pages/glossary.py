"""The glossary: every term the course uses, in the app's own words, each linked to the view that shows it."""

import streamlit as st

from ui import presentation, widgets
from ui.chapters import TITLES
from ui.glossary import TERMS, matching
from ui.i18n import lang, num, t
from ui.presentation import explain

st.title(t("Glossary", "Glossário"))
explain(t("The words the course uses, each with a link that opens the view where you can see it on a real model.",
          "As palavras que o curso usa, cada uma com um link que abre a vista onde dá para vê-la num modelo de "
          "verdade."))
query = widgets.Text("gl_search", t("Search the terms", "Buscar nos termos"), "", kind="text_input",
                     placeholder=t("e.g. attention, cache, softmax", "p. ex. atenção, cache, softmax")).draw()
pt = lang() == "pt"
found = matching(query, pt)
st.caption(t(f"{num(len(found))} of {num(len(TERMS))} terms", f"{num(len(found))} de {num(len(TERMS))} termos"))
if not found:
    st.info(t("No term holds that text.", "Nenhum termo contém esse texto."))
with presentation.view("terms"):
    for key, term, definition, page, params in found:
        with st.container(border=True, key=f"gl_term_{key}"):
            st.markdown(f"**{term[pt]}**")
            st.write(definition[pt])
            st.page_link(page, label=t(f"See it → {TITLES[page][0]}", f"Veja → {TITLES[page][1]}"),
                         query_params={**params, "lang": lang()})
