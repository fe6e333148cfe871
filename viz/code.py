"""The code page's views (chapter 13): a step's numbers as a tokens x columns heatmap, each token's norm as
bars, the last position's top logits, and the key-value cache's cost per decoding step. Pure builders; the
[T, T] attention steps use viz.attention.heatmap."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from viz.format import localized


def _token_axis(title: str, labels: list[str]) -> alt.Axis:
    return alt.Axis(title=title, labelExpr=f"{json.dumps(labels, ensure_ascii=False)}[datum.value]",
                    labelLimit=140, labelOverlap=False)


def matrix(values: np.ndarray, labels: list[str], title: str, row_title: str, column_title: str,
           lang: str = "en", width: int = 560) -> alt.Chart:
    """A [T, columns] array as cells: one row per token (labelled with its text), one column per number,
    coloured on a scale centred on zero."""
    t, c = values.shape
    rows, cols = np.divmod(np.arange(t * c), c)
    flat = values.reshape(-1).astype(np.float64)
    frame = pd.DataFrame({"row": rows, "column": cols, "token": [labels[i] for i in rows],
                          "value": np.where(np.isfinite(flat), flat, np.nan)})
    top = float(np.nanmax(np.abs(frame["value"]))) if frame["value"].notna().any() else 1.0
    chart = alt.Chart(frame, title=title).mark_rect().encode(
        x=alt.X("column:O", title=column_title, axis=alt.Axis(labelAngle=0, values=list(range(0, c, 8)))),
        y=alt.Y("row:O", axis=_token_axis(row_title, labels)),
        color=alt.Color("value:Q", title=None, scale=alt.Scale(scheme="redblue", domain=[-top, top], reverse=True)),
        tooltip=["token:N", "column:O", alt.Tooltip("value:Q", format=".4f")])
    return localized(chart.properties(width=width, height=min(22 * t, 560) + 70), lang)  # the height holds the axes


def norms(values: np.ndarray, labels: list[str], title: str, row_title: str, value_title: str,
          lang: str = "en") -> alt.Chart:
    """Each token's vector length as a horizontal bar."""
    frame = pd.DataFrame({"row": np.arange(len(values)), "token": labels, "norm": np.asarray(values, float)})
    chart = alt.Chart(frame, title=title).mark_bar().encode(
        y=alt.Y("row:O", axis=_token_axis(row_title, labels)), x=alt.X("norm:Q", title=value_title),
        tooltip=["token:N", alt.Tooltip("norm:Q", format=".3f")])
    return localized(chart.properties(width=360, height=min(22 * len(values), 560) + 70), lang)


def top_logits(top: list[tuple[str, float]], title: str, value_title: str, lang: str = "en") -> alt.Chart:
    """The last position's top tokens by logit, the largest on top: sorted by value in the chart itself (in data
    order, a chart redrawn for a new text kept its old order: rank 2 above rank 1)."""
    frame = pd.DataFrame({"rank": range(1, len(top) + 1), "token": [json.dumps(s, ensure_ascii=False)[1:-1]
                                                                      for s, _ in top],
                          "logit": [v for _, v in top]})
    chart = alt.Chart(frame, title=title).mark_bar().encode(
        y=alt.Y("token:N", sort="-x", title=None), x=alt.X("logit:Q", title=value_title),
        tooltip=["rank:O", "token:N", alt.Tooltip("logit:Q", format=".3f")])
    return localized(chart.properties(width=360, height=32 * len(top) + 70), lang)  # the height holds the axes


def kv_chart(rows: list[dict], with_name: str, without_name: str, title: str, x_title: str, y_title: str,
             lang: str = "en") -> alt.Chart:
    """Milliseconds per decoding step with the cache (one new token through `past`) and without it (the whole
    sequence again), against the number of tokens so far."""
    ways = ((with_name, "with_cache"), (without_name, "without_cache"))
    frame = pd.DataFrame([{"tokens": r["tokens"], "way": way, "ms": 1000 * r[key]} for r in rows[1:]
                          for way, key in ways])
    chart = alt.Chart(frame, title=title).mark_line(point=True).encode(
        x=alt.X("tokens:Q", title=x_title, axis=alt.Axis(format="d", tickMinStep=1), scale=alt.Scale(zero=False)),
        y=alt.Y("ms:Q", title=y_title), color=alt.Color("way:N", title=None, legend=alt.Legend(
            orient="top", labelLimit=0)),  # 0: a legend label is never cut ("without (whole sequenc…")
        strokeDash=alt.StrokeDash("way:N", title=None), shape=alt.Shape("way:N", title=None),  # not colour alone
        tooltip=["way:N", "tokens:Q", alt.Tooltip("ms:Q", format=".2f")])
    return localized(chart.properties(height=340), lang)
