"""Presentation mode for a projector: explanations hidden, larger type and charts; kept in the URL (?present=1).

Also the layout rules every page needs on a narrow screen (a projector at 1280×720, a browser at 150 %
zoom): two-column blocks marked with `stack_when_narrow` are stacked instead of cramped.
"""

import streamlit as st

from ui import url_state
from ui.i18n import t

KEY = url_state.PRESENT.name  # st.session_state key, and ?present=1 (url_state.PRESENT)
NARROW_PX = 1100  # below this many CSS pixels of window width, marked column blocks stack
STACK_CLASS = "stack-narrow"  # st.container(key=...) prefix whose columns stack on narrow screens
VIEW_PREFIX = "view"  # st.container(key=f"view-{name}"): a page's view that a lesson step can be about

LAYOUT_CSS = f"""<style>
/* the sidebar's page names and sections wrap instead of being cut with an ellipsis */
[data-testid="stSidebarNav"] span, [data-testid="stSidebarNav"] .stMarkdownEllipsis, [data-testid="stSidebarNav"] p {{
  white-space: normal; overflow: visible; text-overflow: clip; }}
@media (max-width: {NARROW_PX}px) {{
  [class*="st-key-{STACK_CLASS}"] [data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"]) {{
    flex-direction: column; }}
  [class*="st-key-{STACK_CLASS}"] [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] {{
    width: 100% !important; flex: 1 1 100% !important; min-width: 100% !important; }}
}}
</style>"""

# the two-column block a stacking container holds; columns nested inside its columns (layer | head) stay side by side
OUTER = '[data-testid="stHorizontalBlock"]:not([data-testid="stColumn"] [data-testid="stHorizontalBlock"])'
PRESENT_CSS = f"""<style>
.stApp [data-testid="stMainBlockContainer"] {{ max-width: 100%; padding-left: 2rem; padding-right: 2rem; }}
.stApp [data-testid="stMarkdownContainer"] p, .stApp [data-testid="stMarkdownContainer"] li {{ font-size: 1.3rem; }}
.stApp [data-testid="stMain"] [data-testid="stMarkdownContainer"] {{ font-size: 1.3rem; }}  /* HTML views sized in em */
.stApp h1 {{ font-size: 2.8rem; }}
.stApp h2, .stApp h3 {{ font-size: 2rem; }}
.stApp [data-testid="stWidgetLabel"] p {{ font-size: 1.15rem; }}
.stApp [data-testid="stTable"] td, .stApp [data-testid="stTable"] th {{ font-size: 1.2rem; }}
/* what matters most is larger than in normal mode: headline numbers, what the reader types, slider values */
.stApp [data-testid="stMainBlockContainer"] {{ padding-top: 3.5rem; }}
.stApp [data-testid="stMetricValue"], .stApp [data-testid="stMetricValue"] p {{ font-size: 3.2rem; line-height: 1.25; }}
.stApp [data-testid="stMetricLabel"] p {{ font-size: 1.2rem; }}
/* larger labels wrap instead of being cut with an ellipsis */
.stApp [data-testid="stMetricLabel"] p, .stApp [data-testid="stWidgetLabel"] p {{
  white-space: normal; overflow: visible; text-overflow: clip; }}
.stApp [data-testid="stMetricLabel"] .stMarkdownEllipsis, .stApp [data-testid="stWidgetLabel"] .stMarkdownEllipsis {{
  white-space: normal; overflow: visible; }}
.stApp [data-testid="stMain"] textarea, .stApp [data-testid="stMain"] input {{ font-size: 1.3rem; }}
.stApp [data-testid="stMain"] [data-baseweb="select"] div {{ font-size: 1.2rem; }}
.stApp [data-testid="stSliderThumbValue"] {{ transform: translateY(-0.45rem); }}
.stApp [data-testid="stSliderThumbValue"] p {{ font-size: 1.3rem; line-height: 1.2; }}
.stApp [data-testid="stSliderTickBar"] p {{ font-size: 1.1rem; }}
/* every text a class must read is 18 px or more: captions, code blocks and inline commands, the HTML views (em),
   and the tables: st.dataframe draws on a canvas, so its 14 px are zoomed (x 1.3: 18.2 px) */
.stApp [data-testid="stCaptionContainer"], .stApp [data-testid="stCaptionContainer"] p {{ font-size: 1.15rem; }}
.stApp [data-testid="stCode"] pre, .stApp [data-testid="stCode"] code {{ font-size: 1.15rem; }}
.stApp [data-testid="stMarkdownContainer"] code {{ font-size: 0.9em; }}
.stApp [data-testid="stMain"] [data-testid="stElementContainer"]:has(> [data-testid="stFullScreenFrame"] >
  [data-testid="stDataFrame"]) {{
  zoom: 1.3; width: calc(100% / 1.3) !important; }}  /* zoomed as a whole: it fits its column, scrolls inside */
/* in presentation mode every marked two-column block stacks, so charts get the whole width */
[class*="st-key-{STACK_CLASS}"] {OUTER}:has(> [data-testid="stColumn"]) {{ flex-direction: column; }}
[class*="st-key-{STACK_CLASS}"] {OUTER} > [data-testid="stColumn"] {{
  width: 100% !important; flex: 1 1 100% !important; min-width: 100% !important; }}
</style>"""

def from_link() -> bool:
    """What the URL's ?present= asks for, by the codec's boolean rule (1, true, yes, on); off when absent or
    unusable."""
    return url_state.read(url_state.PRESENT)


def on() -> bool:
    """True when the reader (or the link) asked for presentation mode."""
    if KEY in st.session_state:
        return bool(st.session_state[KEY])
    return from_link()


def toggle() -> None:
    """The sidebar switch; mirrors its state in ?present=1 (absent when off, for short links)."""
    if KEY not in st.session_state or url_state.history_entry():  # a link, or Back/Forward: the URL wins
        url_state.check(url_state.PRESENT)  # ?present=maybe: a notice, then off
        st.session_state[KEY] = from_link()
    st.toggle(t("Presentation mode", "Modo apresentação"), key=KEY,
              help=t("For a projector: hides the explanations, enlarges text and charts, stacks side-by-side "
                     "views. Kept in the link (?present=1).",
                     "Para o projetor: esconde as explicações, aumenta textos e gráficos, empilha as vistas "
                     "lado a lado. Fica no link (?present=1)."))
    url_state.put(url_state.PRESENT, True if on() else None)


def style() -> None:
    """Inject the layout CSS on every run, plus the presentation CSS when it is on."""
    st.html(LAYOUT_CSS + (PRESENT_CSS if on() else ""))


def explain(text: str, caption: bool = False) -> None:
    """An explanation (already in the reader's language, through t): written, except in presentation mode."""
    if not on():
        (st.caption if caption else st.write)(text)


def options():
    """Where a page draws its secondary inputs: in place, or in presentation mode folded into an "Options"
    expander, so the page's main chart reaches the first screen of a projector."""
    return st.expander(t("Options", "Opções")) if on() else st.container()


def shown() -> bool:
    """Whether a detail that presentation mode leaves out (a table of the inputs' tokens) is drawn."""
    return not on()


def view(name: str):
    """The container of one of the page's views (lab.lessons.VIEWS): on a projector, a lesson step about it puts it
    on the first screen (ui/lesson.py orders it first)."""
    return st.container(key=f"{VIEW_PREFIX}-{name}")


def stacking(name: str):
    """A container whose two-column blocks stack on narrow screens and in presentation mode."""
    return st.container(key=f"{STACK_CLASS}-{name}")
