"""Charts and tables as files: a Vega-Lite chart as SVG or PNG (vl-convert, offline), a table as CSV."""

from __future__ import annotations

import altair as alt
import pandas as pd

PNG_SCALE = 2  # slides want pixels: twice the on-screen size


def chart_spec(chart: alt.TopLevelMixin) -> dict:
    """The chart's full Vega-Lite spec, data inlined, with no row limit (the page shows all rows too)."""
    with alt.data_transformers.disable_max_rows():
        return chart.to_dict()


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """The chart drawn as an SVG document."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart_spec(chart))


def chart_png(chart: alt.TopLevelMixin, scale: float = PNG_SCALE) -> bytes:
    """The chart drawn as PNG bytes, `scale` times its on-screen size."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart_spec(chart), scale=scale)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as UTF-8 CSV with a byte-order mark, so spreadsheet programs read ã and ç right."""
    return frame.to_csv(index=False).encode("utf-8-sig")
