"""Entry point: page config, the shared sidebar, and navigation over the pages."""

from pathlib import Path

import streamlit as st

from ui import a11y, lesson, lesson_maker, presentation, runtime_fix, sidebar, url_state, warmup
from ui.chapters import TITLES
from ui.i18n import t

runtime_fix.install()  # a rerun right after a run ended no longer loses that run's end (ui/runtime_fix.py)
# Shipped with the app and sent inline: a ":material/..." page icon makes every page fetch it from a font host.
ICON = Path(__file__).parent / "assets" / "icon.svg"
# A presentation link (?present=1) opens with the sidebar folded away: the projector's 1,280 px go to the page.
st.set_page_config(page_title="GPT-2, taken apart", page_icon=ICON, layout="wide",
                   initial_sidebar_state="collapsed" if st.query_params.get("present") == "1" else "auto")

# Titles (both languages) come from ui/chapters.TITLES, which the home page's course map uses too.
# The sidebar lists every page (expanded: no "View more"), in the course's order, so the newest pages are one click
# away like the first ones. One flat list: Streamlit 1.67 draws navigation sections as <div>s inside the list's
# <ul>, which a screen reader cannot read as one list (axe: list, listitem; docs/accessibility.md).
def page(name: str, icon: str, **kw) -> st.Page:
    """app_pages/<name>.py with its title in the UI language and its icon."""
    return st.Page(f"app_pages/{name}.py", title=t(*TITLES[f"app_pages/{name}.py"]), icon=f":material/{icon}:", **kw)


pages = [
    page("home", "home", default=True), page("fossils", "history_edu"), page("glossary", "menu_book"),
    page("tokens", "translate"), page("analogies", "explore"),  # 01-02
    page("attention", "visibility"), page("causal_mask", "theater_comedy"), page("logit_lens", "layers"),
    page("perplexity", "trending_down"),  # 03-06
    page("sampling", "casino"), page("fill", "edit_note"), page("detector", "policy"),  # 07-12
    page("code", "code"), page("serving", "dns"), page("lab_guide", "terminal"), page("ceiling", "vertical_align_top"),
]
nav = st.navigation(pages, expanded=True)
# The sidebar's settings and the page's inputs reach the URL once, when the run ends; a lesson's step (?lesson=,
# ?step=) is applied before the sidebar and its bar drawn above the page (ui/lesson.py, docs/teaching.md).
with warmup.reading(), url_state.publishing(), lesson.presenting(nav):  # reading(): the warm-up waits for this run
    warmup.start()  # once per process: the course models and the ceiling's table load in the background, between runs
    sidebar.draw()
    with st.sidebar:
        presentation.toggle()
    lesson_maker.restore()  # a reload finds the draft this browser was making
    lesson_maker.add_view(nav.url_path or "home")  # "Add this view to a lesson" (ui/lesson_maker.py)
    presentation.style()
    a11y.style()  # <html lang> and what the theme cannot reach (docs/accessibility.md)
    nav.run()
