"""The serving page's view (chapter 14): time to first token, time between tokens and throughput against
concurrency, one line per way of serving, with a band from the lowest to the highest of the repeats. A pure
builder; words passed in."""

from __future__ import annotations

import altair as alt
import pandas as pd

from viz.format import localized

MEASURES = ("ttft_p50", "tbt_mean", "tokens_per_s")


def frame(rows: list[dict], modes: dict[str, str]) -> pd.DataFrame:
    """Long form: mode (its name in words), concurrency, measure, value, lo, hi (ms for times; lo/hi = value when a
    row has no spread)."""
    scale = lambda m, v: None if v is None else (1000 * v if m != "tokens_per_s" else v)  # noqa: E731
    out = [{"mode": modes[r["mode"]], "concurrency": r["concurrency"], "measure": m, "value": scale(m, r[m]),
            "lo": scale(m, r.get(f"{m}_lo", r[m])), "hi": scale(m, r.get(f"{m}_hi", r[m]))}
           for r in rows for m in MEASURES if r.get(m) is not None]
    return pd.DataFrame(out, columns=["mode", "concurrency", "measure", "value", "lo", "hi"])


def chart(data: pd.DataFrame, measure: str, title: str, y_title: str, x_title: str, lang: str = "en") -> alt.Chart:
    """One measure against concurrency: a line per mode (the median repeat) over a band (min to max)."""
    part = data[data["measure"] == measure]
    x = alt.X("concurrency:Q", title=x_title, scale=alt.Scale(type="log", base=2),
              axis=alt.Axis(values=sorted(part["concurrency"].unique().tolist()), format="d"))
    color = alt.Color("mode:N", title=None, legend=alt.Legend(orient="right", labelLimit=320))
    base = alt.Chart(part, title=title)
    band = base.mark_area(opacity=0.18).encode(x=x, y=alt.Y("lo:Q", title=y_title), y2="hi:Q", color=color)
    line = base.mark_line(point=True).encode(
        x=x, y=alt.Y("value:Q", title=y_title), color=color,
        strokeDash=alt.StrokeDash("mode:N", title=None), shape=alt.Shape("mode:N", title=None),  # not colour alone
        tooltip=["mode:N", "concurrency:Q", alt.Tooltip("value:Q", format=".1f"), alt.Tooltip("lo:Q", format=".1f"),
                 alt.Tooltip("hi:Q", format=".1f")])
    return localized(alt.layer(band, line).properties(height=300), lang)
