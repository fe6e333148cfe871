"""Text alternatives for charts (issue 42, docs/accessibility.md), pure, no Streamlit.

`described(chart, lang)` gives a chart Vega-Lite's top-level `description` when it has none: its title, then
what each axis and the colour show, in the reader's language, from the words the chart already carries. Vega
writes it as the chart's `aria-label`, so a screen reader announces what the chart shows; the numbers
themselves stay one click away in the CSV download under every table. A builder that knows better sets its
own `description` first. Marks: Vega-Lite describes each data item from its encodings; a mark that only
decorates is drawn with `aria=False`, and a mark layer with no data is left out rather than drawn empty.
"""

from __future__ import annotations

import altair as alt

from viz.altair_internals import own
from viz.present import _parts

WORDS = {"en": {"chart": "Chart", "x": "across", "y": "up", "color": "colour", "by": "by"},
         "pt": {"chart": "Gráfico", "x": "na horizontal", "y": "na vertical", "color": "cor", "by": "por"}}
CHANNELS = ("x", "y", "color")


def _get(obj, name):
    """A property set on an Altair object (from its own keywords: a channel's attributes are setters), or None."""
    return own(obj, name)


def _title_text(title) -> str:
    """A chart title's words (a string, a list of lines, or TitleParams with a subtitle)."""
    if isinstance(title, alt.TitleParams):
        parts = [_title_text(_get(title, "text")), _title_text(_get(title, "subtitle"))]
        return ". ".join(p for p in parts if p)
    if isinstance(title, (list, tuple)):
        return " ".join(str(x) for x in title if x)
    return str(title) if isinstance(title, str) else ""


def _channel_title(channel) -> str:
    """The title a reader sees for one encoding channel (its own title, else its axis' or legend's), or ""."""
    if not isinstance(channel, alt.SchemaBase):
        return ""
    for owner in (channel, _get(channel, "axis"), _get(channel, "legend")):
        title = _get(owner, "title") if isinstance(owner, alt.SchemaBase) else None
        if isinstance(title, str) and title:
            return title
    return ""


def summary(chart, lang: str = "en") -> str:
    """What the chart shows in one sentence: 'Title. across: keys; up: queries; colour: weight.'"""
    words = WORDS.get(lang, WORDS["en"])
    parts = _parts(chart)
    title = next((t for t in (_title_text(_get(c, "title")) for c in parts) if t), "")
    seen = {}
    for c in parts:
        enc = _get(c, "encoding")
        for name in CHANNELS:
            text = _channel_title(_get(enc, name)) if enc is not None else ""
            if text and name not in seen:
                seen[name] = text
    axes = "; ".join(f"{words[name]}: {text}" for name, text in seen.items())
    head = f"{words['chart']}: {title.rstrip('. ')}" if title else words["chart"]
    return f"{head}. {axes}." if axes else f"{head}."


def described(chart, lang: str = "en"):
    """The chart with a top-level `description` (its summary) unless it already has one."""
    if _get(chart, "description"):
        return chart
    return chart.properties(description=summary(chart, lang))
