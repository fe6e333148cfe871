"""The lab guide (chapter 15): every `python -m lab` command, read from the CLI's own parser, grouped by chapter,
with what it measures and the page whose numbers it prints."""

import streamlit as st

from lab.cli.guide import commands
from ui import presentation, url_state
from ui.chapters import COMMANDS, TITLES
from ui.i18n import num, t
from ui.presentation import explain

st.title(t("The lab guide", "O guia do laboratório"))
explain(t(
    "Every number a page shows comes from one of these commands, run in the project's folder. Each page ends with "
    "\"Reproduce this view\": the exact command for what you are looking at, with your inputs, ready to copy. This "
    "list is read from the command line's own parser, so it always names every command there is.",
    "Todo número que uma página mostra sai de um destes comandos, rodado na pasta do projeto. Cada página termina "
    "com \"Reproduza esta vista\": o comando exato do que você está vendo, com as suas entradas, pronto para "
    "copiar. Esta lista é lida do próprio analisador da linha de comando, então sempre traz todos os comandos."))
listed = commands()
st.caption(t(f"{num(len(listed))} commands · descriptions as the command line writes them (English)",
             f"{num(len(listed))} comandos · descrições como a linha de comando as escreve (em inglês)"))
groups: dict[str, list[dict]] = {}
for c in listed:
    groups.setdefault(COMMANDS.get(c["name"], ("—", None))[0], []).append(c)
with presentation.view("commands"):
    for chapter in sorted(groups, key=lambda k: (k == "—", k)):
        st.subheader(t(f"Chapter {chapter}", f"Capítulo {chapter}") if chapter != "—" else t("Other", "Outros"))
        for c in groups[chapter]:
            with st.container(border=True, key=f"guide_{c['name']}"):
                st.markdown(f"**`{c['name']}`** · {c['help']}")
                st.code(c["usage"], language="bash", wrap_lines=True)
                page = COMMANDS.get(c["name"], ("", None))[1]
                if page:
                    st.page_link(page, label=t(f"Reproduces → {TITLES[page][0]}", f"Reproduz → {TITLES[page][1]}"),
                                 query_params=url_state.link(page))
