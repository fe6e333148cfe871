"""Home: the course's map, every chapter with the page or command that shows it (ui/chapters.py)."""

import streamlit as st

from ui import lesson_maker, presentation, url_state
from ui.chapters import CHAPTERS, TITLES
from ui.i18n import t
from ui.lesson import shipped

st.title(t("GPT-1 and GPT-2, taken apart — the explorer", "GPT-1 e GPT-2, desmontados — o explorador"))
st.write(t(
    "A companion to the course: every page runs a real tokenizer or a real model on text you "
    "choose, so you can see what a chapter explains. Every number here can be reproduced from "
    "the shell with `python -m lab` (chapter 15, the lab guide).",
    "Um complemento do curso: cada página roda um tokenizador ou um modelo de verdade sobre o "
    "texto que você escolher, para você ver o que cada capítulo explica. Todo número daqui pode "
    "ser reproduzido no terminal com `python -m lab` (capítulo 15, o guia do laboratório).",
))
st.subheader(t("Lessons for a class", "Lições para uma turma"))
st.caption(t("A lesson walks a class through the pages one step at a time, with the inputs already set; a clicker's "
             "PageDown moves to the next step. How to write your own: docs/teaching.md.",
             "Uma lição leva a turma pelas páginas passo a passo, com as entradas já prontas; o PageDown de um "
             "passador de slides vai ao próximo passo. Como escrever a sua: docs/teaching.md."))
for name, title in shipped():
    st.page_link("app_pages/home.py", label=title, query_params={"lesson": name}, icon=":material/school:")
lesson_maker.editor()
st.subheader(t("The course, chapter by chapter", "O curso, capítulo por capítulo"))

with presentation.view("map"):
    for number, title_en, title_pt, pages, command, what_en, what_pt in CHAPTERS:
        with st.container(border=True):
            heading = (f"{t('Chapter', 'Capítulo')} {number} · " if number != "—" else "") + t(title_en, title_pt)
            if pages:
                for k, path in enumerate(pages):  # the chapter, then the page it opens (its name in the navigation)
                    page = t(*TITLES[path])
                    st.page_link(path, label=f"**{heading}** → {page}" if k == 0 else t(f"and also → {page}",
                                                                                          f"e também → {page}"),
                                 query_params=url_state.link(path))  # one history entry: one Back returns here
            else:
                st.markdown(f"**{heading}**")
            st.caption(t(what_en, what_pt) + (f" `{command}`" if command else ""))
