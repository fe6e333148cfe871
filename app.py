"""Entry point: page config, the shared sidebar, and navigation over the pages."""

from pathlib import Path

import streamlit as st

from ui import a11y, presentation, sidebar, url_state
from ui.chapters import TITLES
from ui.i18n import t

# Shipped with the app and sent inline: a ":material/..." page icon makes every page fetch it from a font host.
ICON = Path(__file__).parent / "assets" / "icon.svg"
st.set_page_config(page_title="GPT-2, taken apart", page_icon=ICON, layout="wide")

# Titles (both languages) come from ui/chapters.TITLES, which the home page's course map uses too.
# The sidebar lists every page (no "View more"), in sections by part of the course (chapter numbers as on the home
# page's map), so the newest pages are one click away like the first ones.
def page(name: str, icon: str, **kw) -> st.Page:
    """app_pages/<name>.py with its title in the UI language and its icon."""
    return st.Page(f"app_pages/{name}.py", title=t(*TITLES[f"app_pages/{name}.py"]), icon=f":material/{icon}:", **kw)


pages = {
    "": [page("home", "home", default=True), page("fossils", "history_edu"), page("glossary", "menu_book")],
    t("Tokens and embeddings · 01–02", "Tokens e embeddings · 01–02"): [
        page("tokens", "translate"),
        page("analogies", "explore")],
    t("Inside the model · 03–06", "Dentro do modelo · 03–06"): [
        page("attention", "visibility"),
        page("causal_mask", "theater_comedy"),
        page("logit_lens", "layers"),
        page("perplexity", "trending_down")],
    t("Generating, filling, detecting · 07–12", "Gerar, preencher, detectar · 07–12"): [
        page("sampling", "casino"),
        page("fill", "edit_note"),
        page("detector", "policy")],
    t("Code, serving, the lab, limits · 13–16", "Código, servir, o laboratório, limites · 13–16"): [
        page("code", "code"),
        page("serving", "dns"),
        page("lab_guide", "terminal"),
        page("ceiling", "vertical_align_top")],
}
nav = st.navigation(pages, expanded=True)
with url_state.publishing():  # the sidebar's settings and the page's inputs reach the URL once, when the run ends
    sidebar.draw()
    with st.sidebar:
        presentation.toggle()
    presentation.style()
    a11y.style()  # <html lang> and what the theme cannot reach (docs/accessibility.md)
    nav.run()
