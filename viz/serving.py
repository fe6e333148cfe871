"""The serving page's view (chapter 14): time to first token, time between tokens and throughput against
concurrency, one line per way of serving. A pure builder; words passed in."""

from __future__ import annotations

import altair as alt
import pandas as pd

from viz.format import localized

MEASURES = ("ttft_p50", "tbt_mean", "tokens_per_s")


def frame(rows: list[dict], modes: dict[str, str]) -> pd.DataFrame:
    """Long form: mode (its name in words), concurrency, measure, value (ms for times)."""
    out = [{"mode": modes[r["mode"]], "concurrency": r["concurrency"], "measure": m,
            "value": (1000 * r[m] if m != "tokens_per_s" else r[m])}
           for r in rows for m in MEASURES if r.get(m) is not None]
    return pd.DataFrame(out, columns=["mode", "concurrency", "measure", "value"])


def chart(data: pd.DataFrame, measure: str, title: str, y_title: str, x_title: str, lang: str = "en") -> alt.Chart:
    """One measure against concurrency, a line per mode."""
    part = data[data["measure"] == measure]
    c = alt.Chart(part, title=title).mark_line(point=True).encode(
        x=alt.X("concurrency:Q", title=x_title, scale=alt.Scale(type="log", base=2),
                axis=alt.Axis(values=sorted(part["concurrency"].unique().tolist()), format="d")),
        y=alt.Y("value:Q", title=y_title),
        color=alt.Color("mode:N", title=None, legend=alt.Legend(orient="right", labelLimit=320)),
        strokeDash=alt.StrokeDash("mode:N", title=None), shape=alt.Shape("mode:N", title=None),  # not colour alone
        tooltip=["mode:N", "concurrency:Q", alt.Tooltip("value:Q", format=".1f")])
    return localized(c.properties(height=300), lang)
