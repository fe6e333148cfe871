"""Page inputs declared once: a widget's key, label, range or options and default in one call, its link
binding derived from them (ui.url_state: the URL, Back/Forward, page switches).

    top_k = widgets.Slider("samp_top_k", t("Top-k", "Top-k"), 0, 200, default=50).draw(col)

`draw(where)` binds the value (url_state.bind, with the codec the widget's own range or options give)
and draws the widget in `where` (st, a column, a container); it returns the widget's value. A page
that must keep an input before drawing it (a run may stop above it, or a callback fills it) calls
`bind()` early and `draw()` later: the second bind of a run is skipped.

Streamlit 1.67's native `bind="query-params"` is used nowhere: measured in Chromium, it opens a link
and drops garbage silently, but Back/Forward does not walk through the views and a page switch loses
the value, and every page input here must do both (the shared-links tests hold it to that). So every
input goes through url_state, which also names an ignored link value in a notice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st

from ui import url_codecs as link
from ui import url_state
from ui.limits import cap_text


class Widget:
    """One page input: its key (also its link parameter), label and default; subclasses add the range or
    options and name the Streamlit widget that draws it."""

    def __init__(self, key: str, label: str, default, **kwargs):
        self.key, self.label, self.default, self.kwargs = key, label, default, kwargs
        self.value, self._bound = default, False

    def codec(self) -> link.Codec:
        raise NotImplementedError

    def bind(self):
        """The value the URL or the session gives this input (see ui.url_state.bind), kept for this run."""
        if not self._bound:
            self.value = url_state.bind(self.key, self.default, self.codec())
            self._bound = True
        return self.value

    def draw(self, where=None):
        """Bind, then draw the widget in `where` (default: the page); the widget's value."""
        self.bind()
        return self.widget(where if where is not None else st)

    def widget(self, where):
        raise NotImplementedError


def _options_codec(options: list) -> link.Codec:
    """A range of whole numbers travels as a number (its notice says the range), other options by name."""
    if isinstance(options, range) and options.step == 1:
        return link.integer(options.start, options.stop - 1)
    return link.choice(options)


class Slider(Widget):
    """st.slider over lo..hi; a float range (with `least`: no value between 0 and least) or whole numbers."""

    def __init__(self, key, label, lo, hi, default, step=None, least: float = 0.0, **kwargs):
        super().__init__(key, label, default, **kwargs)
        self.lo, self.hi, self.step, self.least = lo, hi, step, least

    def codec(self):
        if isinstance(self.lo, float):
            return link.real(self.lo, self.hi, least=self.least)
        return link.integer(self.lo, self.hi)

    def widget(self, where):
        return where.slider(self.label, self.lo, self.hi, step=self.step, key=self.key, **self.kwargs)


class NumberInput(Slider):
    """st.number_input for a whole number lo..hi."""

    def widget(self, where):
        return where.number_input(self.label, self.lo, self.hi, step=self.step or 1, key=self.key, **self.kwargs)


class Choice(Widget):
    """One of `options`, drawn by `kind`: "selectbox", "radio", "pills" or "select_slider"."""

    def __init__(self, key, label, options: Iterable, default, kind: str = "selectbox", **kwargs):
        super().__init__(key, label, default, **kwargs)
        self.options = options if isinstance(options, range) else list(options)
        self.kind = kind

    def codec(self):
        return _options_codec(self.options)

    def widget(self, where):
        return getattr(where, self.kind)(self.label, self.options, key=self.key, **self.kwargs)


class MultiSelect(Widget):
    """st.multiselect over `options`; a link may name any of `known` (default: the options), which the page
    then sorts out itself (the hosted demo's refusal notice)."""

    def __init__(self, key, label, options: Iterable, default: list, known: Iterable | None = None, **kwargs):
        super().__init__(key, label, default, **kwargs)
        self.options = list(options)
        self.known = list(known) if known is not None else self.options

    def codec(self):
        return link.choices(self.known)

    def widget(self, where):
        return where.multiselect(self.label, self.options, key=self.key, **self.kwargs)


class Toggle(Widget):
    """On or off: st.toggle (or st.checkbox with kind="checkbox")."""

    def __init__(self, key, label, default: bool, kind: str = "toggle", **kwargs):
        super().__init__(key, label, default, **kwargs)
        self.kind = kind

    def codec(self):
        return link.boolean()

    def widget(self, where):
        return getattr(where, self.kind)(self.label, key=self.key, **self.kwargs)


class Text(Widget):
    """Free text: st.text_area (or st.text_input with kind="text_input"), cut to the hosted demo's cap
    (`cap(key)`, ui.limits.cap_text unless the page names another)."""

    def __init__(self, key, label, default: str, kind: str = "text_area",
                 cap: Callable[[str], Any] = cap_text, **kwargs):
        super().__init__(key, label, default, **kwargs)
        self.kind, self.cap = kind, cap

    def codec(self):
        return link.text()

    def widget(self, where):
        return getattr(where, self.kind)(self.label, key=self.key, max_chars=self.cap(self.key), **self.kwargs)


def bind_all(*inputs: Widget) -> list:
    """Bind several inputs now (before a callback or an early stop could lose them); their values."""
    return [w.bind() for w in inputs]
