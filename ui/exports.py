"""Every chart with SVG and PNG downloads, every table with a CSV download, images as PNG.

The files are made only when a reader clicks (Streamlit runs a callable `data` then, on another
thread), so drawing a page costs nothing extra. SVG and PNG come from the chart's own Vega-Lite
spec through vl-convert (offline, no browser needed); the PNG is drawn at twice the size, for slides.
Charts are drawn larger in presentation mode (viz.present: their own sizes and Vega's fonts).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from ui import presentation
from ui.cached import charts as cached_charts
from ui.i18n import t
from viz.export import chart_png, chart_svg, csv_bytes
from viz.present import for_projector


def _slug(name: str) -> str:
    """A file-name-safe version of `name`."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "chart"


def _buttons(where, key: str, files: list[tuple[str, object, str, str]]) -> None:
    """A row of small download buttons: (label, data or callable, file name, mime) each."""
    row = where.container(horizontal=True, gap="small", key=f"exports_{key}")
    for label, data, file_name, mime in files:
        row.download_button(label, data, file_name=file_name, mime=mime, key=f"dl_{key}_{label}",
                            on_click="ignore", type="tertiary", icon=":material/download:",
                            help=t(f"Download as {label}", f"Baixar como {label}"))


class Later(NamedTuple):
    """A chart not built yet: a viz function and its arguments (see `later`)."""
    builder: Callable
    args: tuple
    kwargs: dict

    def build(self):
        return self.builder(*self.args, **self.kwargs)


def later(builder: Callable, *args, **kwargs) -> Later:
    """`builder(*args, **kwargs)`, built only when no reader has drawn the same chart yet (ui.cached.charts)."""
    return Later(builder, args, kwargs)


def chart(name: str, where, ch: Later, **kwargs):
    """`where` draws the chart (where: st or a column; kwargs: st.vega_lite_chart's), then its SVG and PNG
    downloads; returns its event. Its spec is made once per view and projector (ui.cached.charts.spec), and the
    files are built only when a reader clicks."""
    projector = presentation.on()  # its own sizes and Vega's fonts larger
    built = f"{ch.builder.__module__}.{ch.builder.__qualname__}"
    event = where.vega_lite_chart(cached_charts.spec(built, ch.builder, ch.args, ch.kwargs, projector), **kwargs)

    def full():
        return for_projector(ch.build()) if projector else ch.build()

    slug = _slug(name)
    _buttons(where, kwargs.get("key") or slug, [("SVG", lambda: chart_svg(full()), f"{slug}.svg", "image/svg+xml"),
                                                ("PNG", lambda: chart_png(full()), f"{slug}.png", "image/png")])
    return event


def table(name: str, where, frame, key: str | None = None) -> None:
    """A CSV download of `frame` (the table as shown: the reader's headers), under a table."""
    slug = _slug(name)
    _buttons(where, key or slug, [("CSV", lambda: csv_bytes(frame), f"{slug}.csv", "text/csv")])


def image(name: str, where, png: bytes, key: str | None = None) -> None:
    """A PNG download of an image already made as PNG bytes."""
    slug = _slug(name)
    _buttons(where, key or slug, [("PNG", png, f"{slug}.png", "image/png")])
