"""The ceiling page's views (chapter 16): the observed chance that n predictions in a row are right beside
(1 - e)^n, and the forced-error experiment's tokens coloured right or wrong. Pure builders; text escaped."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd

from viz.format import localized

# right/wrong: a pale green and a deeper salmon that stay apart under deuteranopia and protanopia
# (tests/test_colour.py), and a wrong token is also underlined with a wave: never red against green alone
RIGHT, WRONG = "#c6ecbf", "#f08a78"
WRONG_MARK = "text-decoration: underline wavy #7a1c0e"
FLOOR = 1e-4  # the curves' chart stops at one start position in 10,000


def curve_frame(results: list[dict], observed: str, predicted: str) -> pd.DataFrame:
    """Long form: model, n, which (the two names given), value."""
    rows = [{"model": r["model"], "n": c["n"], "which": which, "value": c[key]}
            for r in results for c in r["curve"] for which, key in ((observed, "observed"), (predicted, "predicted"))
            if c[key] is not None]
    return pd.DataFrame(rows, columns=["model", "n", "which", "value"])


def curve_chart(frame: pd.DataFrame, title: str, x_title: str, y_title: str, lang: str,
                max_n: int | None = None) -> alt.Chart:
    """Both curves per model (observed solid, predicted dashed) and the line at one half, on a log scale (with e
    near 0.5 both fall by orders of magnitude within a few tokens), from 1 down to FLOOR: what falls below it,
    a run never seen (0) among them, is left off. The x-axis runs to max_n (the longest run measured) even where
    the curves have fallen off; the legend keys solid against dashed with line symbols."""
    n_max = int(max_n or frame["n"].max())
    lines = alt.Chart(frame[frame["value"] >= FLOOR]).mark_line(point=True).encode(
        x=alt.X("n:Q", title=x_title, axis=alt.Axis(format="d", tickMinStep=1),
                scale=alt.Scale(domain=[1, n_max], nice=False)),
        y=alt.Y("value:Q", title=y_title, scale=alt.Scale(type="log", domain=[FLOOR, 1]),
                axis=alt.Axis(format=".2~%")),
        color=alt.Color("model:N", title=None, legend=alt.Legend(orient="top", labelLimit=400)),
        strokeDash=alt.StrokeDash("which:N", title=None, legend=alt.Legend(
            orient="top", symbolType="stroke", symbolSize=400, symbolStrokeWidth=2, symbolStrokeColor="#333",
            labelLimit=400), scale=alt.Scale(
            domain=list(dict.fromkeys(frame["which"])), range=[[1, 0], [5, 4]])),  # observed solid, (1 - e)^n dashed
        tooltip=["model:N", "which:N", "n:Q", alt.Tooltip("value:Q", format=".1%")])
    half = alt.Chart(pd.DataFrame({"y": [0.5]})).mark_rule(color="#999", strokeDash=[2, 2]).encode(y="y:Q")
    return localized(alt.layer(half, lines, title=title).properties(height=300), lang)


def _span(text: str, colour: str | None, tip: str, cls: str = "ceil-tok", mark: str = "") -> str:
    style = f' style="background:{colour};color:#111;border-radius:3px{";" + mark if mark else ""}"' if colour else ""
    return f'<span class="{cls}"{style} title="{html.escape(tip, quote=True)}">{html.escape(text)}</span>'


def forced_html(runs: list[dict], position: int, right: list[bool], forced: str | None, words: dict) -> str:
    """The text up to the k tokens after `position`: the token at `position` marked (or, with `forced`, struck
    through with the forced token beside it); each following token green when the top-1 prediction was right,
    red when not."""
    parts, k = [], len(right)
    for run in runs:
        if run["start"] > position + k:
            break
        if run["start"] <= position < run["stop"] and forced is None:
            parts.append(_span(run["text"], "#dddddd", words["original"], "ceil-original"))
        elif run["start"] <= position < run["stop"]:
            parts.append(f'<s class="ceil-original">{html.escape(run["text"])}</s>')
            parts.append(_span(forced, "#d4a8f0", words["forced"], "ceil-forced"))
        elif run["start"] > position:
            ok = [right[p - position - 1] for p in range(run["start"], run["stop"]) if p - position - 1 < k]
            good = all(ok)
            parts.append(_span(run["text"], RIGHT if good else WRONG, words["right" if good else "wrong"],
                               mark="" if good else WRONG_MARK))
        else:
            parts.append(html.escape(run["text"]))
    return f'<div class="ceil-text" style="line-height:1.9;white-space:pre-wrap">{"".join(parts)}</div>'
