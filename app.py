"""Entry point: page config, the shared sidebar, and navigation over the pages."""

from pathlib import Path

import streamlit as st

from ui import a11y, lesson, lesson_maker, navigation, presentation, runtime_fix, sidebar, url_state, warmup

runtime_fix.install()  # a rerun right after a run ended no longer loses that run's end (ui/runtime_fix.py)
# Shipped with the app and sent inline: a ":material/..." page icon makes every page fetch it from a font host.
ICON = Path(__file__).parent / "assets" / "icon.svg"
# A presentation link (?present=1, or true) opens with the sidebar folded away: the projector's 1,280 px go to the page.
st.set_page_config(page_title="GPT-2, taken apart", page_icon=ICON, layout="wide",
                   initial_sidebar_state="collapsed" if presentation.from_link() else "auto")

# Every page of the manifest (lab/pages.py), in the course's order, titled in the UI language (ui/navigation.py).
nav = st.navigation(navigation.pages(), expanded=True)
# The sidebar's settings and the page's inputs reach the URL once, when the run ends; a lesson's step (?lesson=,
# ?step=) is applied before the sidebar and its bar drawn above the page (ui/lesson.py, docs/teaching.md).
# reading(): the warm-up waits for this run; withheld: a lesson step's question waits for its answer (ui/answers.py)
with warmup.reading(), url_state.publishing(), lesson.presenting(nav) as withheld:
    warmup.start()  # once per process: the course models and the ceiling's table load in the background, between runs
    sidebar.draw()
    with st.sidebar:
        presentation.toggle()
    lesson_maker.restore()  # a reload finds the draft this browser was making
    lesson_maker.add_view(nav.url_path or "home")  # "Add this view to a lesson" (ui/lesson_maker.py)
    presentation.style()
    a11y.style()  # <html lang> and what the theme cannot reach (docs/accessibility.md)
    if not withheld:  # a lesson step's question waits for its answer: the page then (ui/answers.py)
        nav.run()
