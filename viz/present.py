"""Charts for a projector: a copy of an Altair chart with its own sizes scaled up (pure, no Streamlit).

Presentation mode enlarges every chart the same way: the text sizes, offsets, widths, heights and steps a
chart states itself are multiplied by one factor, so a heatmap's cells grow with their numbers (a value
that fitted its cell still fits), and the fonts a chart leaves to Vega are set larger by `config`.
The chart's data is shared, never copied; the original chart is left as it was.
"""

from __future__ import annotations

import altair as alt

from viz.altair_internals import own, set_own

FACTOR = 1.35  # how much larger a chart's own sizes are on a projector
# Vega-Lite config for the fonts a chart leaves to Vega: axes, legends, titles, facet headers, text marks.
FONTS = {"axis": {"labelFontSize": 15, "titleFontSize": 17},
         "legend": {"labelFontSize": 15, "titleFontSize": 16},
         "title": {"fontSize": 20, "subtitleFontSize": 16}, "header": {"labelFontSize": 15, "titleFontSize": 17},
         "text": {"fontSize": 15}}
MARK_SIZES = ("fontSize", "dx", "dy", "size", "strokeWidth")  # a mark's own lengths (size: a point's area: squared)
NESTED = ("layer", "hconcat", "vconcat", "concat")


def _parts(ch) -> list:
    """The chart and every chart inside it (layers, concatenations, a facet's or repeat's inner spec)."""
    out, todo = [], [ch]
    while todo:
        c = todo.pop()
        out.append(c)
        for name in NESTED:
            todo += list(_get(c, name) or [])
        spec = _get(c, "spec")
        if isinstance(spec, alt.SchemaBase):
            todo.append(spec)
    return out


def _get(c, name):
    return own(c, name)


def _length(value, factor: float):
    """A width/height/step scaled: numbers and alt.Step; "container" and the like stay."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value * factor
    step = getattr(value, "step", alt.Undefined) if isinstance(value, alt.SchemaBase) else alt.Undefined
    if isinstance(step, int | float):
        return alt.Step(step * factor)
    return value


def _scale_mark(c, factor: float) -> None:
    mark = _get(c, "mark")
    if not isinstance(mark, alt.SchemaBase):
        return
    for name in MARK_SIZES:
        v = own(mark, name)
        if isinstance(v, int | float) and not isinstance(v, bool):
            set_own(mark, name, v * factor * factor if name == "size" else v * factor)


def scaled(ch, factor: float = FACTOR):
    """A copy of `ch` with its own text sizes, offsets, widths, heights and steps times `factor` (data shared)."""
    ch = ch.copy(deep=True, ignore=["data"])
    for c in _parts(ch):
        _scale_mark(c, factor)
        for name in ("width", "height"):
            v = _get(c, name)
            if v is not None:
                set_own(c, name, _length(v, factor))
    return ch


def for_projector(ch, factor: float = FACTOR):
    """The chart as presentation mode draws it: its own sizes scaled, and Vega's default fonts set larger."""
    ch = scaled(ch, factor)
    for part, options in FONTS.items():
        ch = getattr(ch, f"configure_{part}")(**options)
    return ch
