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
pages = [
    st.Page("app_pages/home.py", title=t(*TITLES["app_pages/home.py"]), icon=":material/home:", default=True),
    st.Page("app_pages/fossils.py", title=t(*TITLES["app_pages/fossils.py"]), icon=":material/history_edu:"),
    st.Page("app_pages/glossary.py", title=t(*TITLES["app_pages/glossary.py"]), icon=":material/menu_book:"),
    st.Page("app_pages/tokens.py", title=t(*TITLES["app_pages/tokens.py"]), icon=":material/translate:"),
    st.Page("app_pages/analogies.py", title=t(*TITLES["app_pages/analogies.py"]), icon=":material/explore:"),
    st.Page("app_pages/attention.py", title=t(*TITLES["app_pages/attention.py"]), icon=":material/visibility:"),
    st.Page("app_pages/causal_mask.py", title=t(*TITLES["app_pages/causal_mask.py"]), icon=":material/theater_comedy:"),
    st.Page("app_pages/logit_lens.py", title=t(*TITLES["app_pages/logit_lens.py"]), icon=":material/layers:"),
    st.Page("app_pages/perplexity.py", title=t(*TITLES["app_pages/perplexity.py"]), icon=":material/trending_down:"),
    st.Page("app_pages/sampling.py", title=t(*TITLES["app_pages/sampling.py"]), icon=":material/casino:"),
    st.Page("app_pages/fill.py", title=t(*TITLES["app_pages/fill.py"]), icon=":material/edit_note:"),
    st.Page("app_pages/detector.py", title=t(*TITLES["app_pages/detector.py"]), icon=":material/policy:"),
    st.Page("app_pages/code.py", title=t(*TITLES["app_pages/code.py"]), icon=":material/code:"),
    st.Page("app_pages/serving.py", title=t(*TITLES["app_pages/serving.py"]), icon=":material/dns:"),
    st.Page("app_pages/lab_guide.py", title=t(*TITLES["app_pages/lab_guide.py"]), icon=":material/terminal:"),
    st.Page("app_pages/ceiling.py", title=t(*TITLES["app_pages/ceiling.py"]), icon=":material/vertical_align_top:"),
]
nav = st.navigation(pages)
with url_state.publishing():  # the sidebar's settings and the page's inputs reach the URL once, when the run ends
    sidebar.draw()
    with st.sidebar:
        presentation.toggle()
    presentation.style()
    a11y.style()  # <html lang> and what the theme cannot reach (docs/accessibility.md)
    nav.run()
