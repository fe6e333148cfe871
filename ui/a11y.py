"""What the theme cannot reach for WCAG 2.2 AA (issue 42, docs/accessibility.md): the page's language in
`<html lang>`, and the syntax colours of `st.code`, which Streamlit 1.67 takes from its fixed palette.

The theme (.streamlit/config.toml) does the rest: near-black text (captions are that colour at 60 %), a darker
primary red (a selected pill's label), near-black inline code.
"""

import streamlit as st

from ui.i18n import lang

HTML_LANG = {"en": "en", "pt": "pt-BR"}  # BCP 47 tags: a screen reader picks its voice from <html lang>

# What no theme option reaches. st.code's token colours (Prism classes) on its #f7f7f6 block: each at least
# 4.97:1 (AA asks 4.5:1); the highlighting keeps its hues, only darker.
CODE_CSS = """<style>
[data-testid="stCode"] .token.attr-name, [data-testid="stCode"] .token.property,
[data-testid="stCode"] .token.variable { color: #0b6584; }
[data-testid="stCode"] .token.number, [data-testid="stCode"] .token.regex { color: #0a7363; }
[data-testid="stCode"] .token.boolean, [data-testid="stCode"] .token.constant, [data-testid="stCode"] .token.symbol,
[data-testid="stCode"] .token.string, [data-testid="stCode"] .token.char, [data-testid="stCode"] .token.attr-value,
[data-testid="stCode"] .token.inserted { color: #1e7b34; }
[data-testid="stCode"] .token.operator, [data-testid="stCode"] .token.entity, [data-testid="stCode"] .token.decorator,
[data-testid="stCode"] .token.atrule { color: #a4510b; }
[data-testid="stCode"] .token.url { color: #7b3fb2; }
[data-testid="stCode"] .token.comment, [data-testid="stCode"] .token.prolog, [data-testid="stCode"] .token.doctype,
[data-testid="stCode"] .token.cdata, [data-testid="stCode"] .token.punctuation,
[data-testid="stCode"] .token.unchanged { color: #5f5e5c; }
[data-testid="stCode"] .token.keyword, [data-testid="stCode"] .token.tag, [data-testid="stCode"] .token.function,
[data-testid="stCode"] .token.class-name, [data-testid="stCode"] .token.selector { color: #1f5fbf; }
[data-testid="stCode"] .token.important, [data-testid="stCode"] .token.deleted { color: #b81f2e; }
/* a multiselect's typing box after its chips shrank to 11.5 px; WCAG 2.2's target size asks 24 px */
[data-testid="stMultiSelect"] input[role="combobox"] { min-width: 24px; }
</style>"""

# Streamlit exposes no setting for <html lang>: a fixed script (no reader input in it) sets it on every run.
LANG_SCRIPT = '<script data-app="html-lang">document.documentElement.lang = "{tag}";</script>'


# Streamlit draws a slider's value with a printf format, which has no decimal comma: on the Portuguese UI (the
# <html lang> above) a script writes the comma into the value and the range ends, again whenever a slider moves
# (issue 48: "1.50" on the Portuguese UI). Installed once per tab; nothing of the reader's reaches it.
SLIDER_COMMA = """<script data-app="slider-comma">(() => {
  if (window.__sliderComma) return;
  window.__sliderComma = true;
  const sel = '[data-testid="stSliderThumbValue"], [data-testid="stSliderTickBarMin"], ' +
              '[data-testid="stSliderTickBarMax"]';
  let queued = false;
  const fix = () => {
    queued = false;
    if (document.documentElement.lang !== "pt-BR") return;
    document.querySelectorAll(sel).forEach((box) => {
      const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (/\\d\\.\\d/.test(n.nodeValue)) n.nodeValue = n.nodeValue.replace(/(\\d)\\.(\\d)/g, "$1,$2");
      }
    });
  };
  new MutationObserver(() => { if (!queued) { queued = true; requestAnimationFrame(fix); } })
    .observe(document.body, {childList: true, subtree: true, characterData: true});
  fix();
})();</script>"""


def style() -> None:
    """The contrast CSS and the page language for screen readers, as one element at the sidebar's foot (out of
    the page's own flow; it starts with its style sheet, as the app's other CSS does)."""
    with st.sidebar:
        st.html(CODE_CSS + LANG_SCRIPT.format(tag=HTML_LANG[lang()]) + SLIDER_COMMA, unsafe_allow_javascript=True)
