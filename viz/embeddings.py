"""Charts for the analogies page (chapter 02): the best answers as bars, and the analogy's 2D picture.

Pure builders: result rows or lab.embeddings.picture() in, alt.Chart out. Tokens are shown with a
visible space (␣king), and bars are placed by rank, never sorted by their text.
"""

from __future__ import annotations

import json
import math

import altair as alt
import pandas as pd

from viz.format import localized

# Titles and role names; pages pass their own (translated) `names` to override any.
NAMES = {"rank": "rank", "token": "token", "score": "score", "x": "PC1", "y": "PC2", "role": "role",
         "a": "a", "b": "b", "c": "c", "target": "a − b + c", "result": "result", "expected": "expected",
         "a − b": "a − b", "c − b": "c − b"}
ROLE_COLOURS = {"a": "#1f77b4", "b": "#d62728", "c": "#2ca02c", "target": "#111111", "result": "#ff7f0e",
                "expected": "#9467bd"}
PAIR_COLOURS = {"a − b": "#444444", "c − b": "#bbbbbb"}


def visible(token: str) -> str:
    """A token as a label: spaces as ␣, newlines as ↵, tabs as ⇥ (so " king" and "king" differ)."""
    return token.translate(str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥"}))


def results_frame(results: list[dict]) -> pd.DataFrame:
    """Result rows as a table: rank (1 = best), token (visible spaces), id, score."""
    return pd.DataFrame({"rank": range(1, len(results) + 1), "token": [visible(r["token"]) for r in results],
                         "id": [r["id"] for r in results], "score": [r["score"] for r in results]})


def scores_chart(results: list[dict], title: str = "", names: dict | None = None, highlight: int | None = None,
                 width: int = 360, lang: str = "en") -> alt.Chart:
    """Horizontal bars of the results' scores, best on top; the token `highlight` (an id) in another colour."""
    words = {**NAMES, **(names or {})}
    df = results_frame(results)
    df["mark"] = df["id"] == highlight
    labels = list(df["token"])
    axis = alt.Axis(title=None, labelExpr=f"{json.dumps(labels, ensure_ascii=False)}[datum.value - 1]", labelLimit=160,
                    labelOverlap=False)
    return localized(alt.Chart(df, title=title).mark_bar().encode(
        y=alt.Y("rank:O", axis=axis),
        x=alt.X("score:Q", title=words["score"]),
        color=alt.condition("datum.mark", alt.value(ROLE_COLOURS["expected"]), alt.value(ROLE_COLOURS["result"])),
        tooltip=[alt.Tooltip("rank:O", title=words["rank"]), alt.Tooltip("token:N", title=words["token"]),
                 alt.Tooltip("id:Q"), alt.Tooltip("score:Q", title=words["score"], format=".4f")],
    ).properties(width=width, height=alt.Step(22)), lang)


def analogy_chart(pic: dict, title: str = "", subtitle: str = "", names: dict | None = None,
                  size: int = 460, lang: str = "en") -> alt.LayerChart:
    """The PCA picture: labelled points by role, and the parallelogram's four sides as arrows.

    Both axes share one scale (equal spans, square chart), so parallel sides look parallel.
    """
    words = {**NAMES, **(names or {})}
    pts = pd.DataFrame(pic["points"])
    pts["label"] = [visible(str(x)) if r in ("result", "expected") else str(x)
                    for x, r in zip(pts["label"], pts["role"], strict=True)]
    pts["role_name"] = [words[r] for r in pts["role"]]
    cx, cy = (pts["x"].min() + pts["x"].max()) / 2, (pts["y"].min() + pts["y"].max()) / 2
    half = max(pts["x"].max() - pts["x"].min(), pts["y"].max() - pts["y"].min()) / 2 * 1.2 or 1.0
    sx = alt.Scale(domain=[cx - half, cx + half], nice=False, zero=False)
    sy = alt.Scale(domain=[cy - half, cy + half], nice=False, zero=False)
    arrows = pd.DataFrame([{"x": pic["points"][a["from"]]["x"], "y": pic["points"][a["from"]]["y"],
                            "x2": pic["points"][a["to"]]["x"], "y2": pic["points"][a["to"]]["y"],
                            "pair": words[a["pair"]]} for a in pic["arrows"]])
    # A triangle at each arrow's end, turned to point along it (0° = up, clockwise, on equal axes).
    arrows["angle"] = [math.degrees(math.atan2(r.x2 - r.x, r.y2 - r.y)) % 360 for r in arrows.itertuples()]
    pair_scale = alt.Scale(domain=[words["a − b"], words["c − b"]], range=list(PAIR_COLOURS.values()))
    x, y = alt.X("x:Q", scale=sx, title=words["x"]), alt.Y("y:Q", scale=sy, title=words["y"])
    lines = alt.Chart(arrows).mark_rule(strokeWidth=2).encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q", color=alt.Color("pair:N", scale=pair_scale, title=None),
        strokeDash=alt.condition(f"datum.pair == {words['c − b']!r}", alt.value([4, 3]), alt.value([1, 0])))
    heads = alt.Chart(arrows).mark_point(shape="triangle-up", filled=True, size=90, opacity=1).encode(
        x=alt.X("x2:Q", scale=sx), y=alt.Y("y2:Q", scale=sy), angle=alt.Angle("angle:Q", scale=None),
        color=alt.Color("pair:N", scale=pair_scale, legend=None))
    role_scale = alt.Scale(domain=[words[r] for r in ROLE_COLOURS], range=list(ROLE_COLOURS.values()))
    base = alt.Chart(pts).encode(x=x, y=y, tooltip=[alt.Tooltip("label:N", title=words["token"]),
                                                     alt.Tooltip("role_name:N", title=words["role"])])
    dots = base.mark_circle(size=70, opacity=1).encode(color=alt.Color("role_name:N", scale=role_scale,
                                                                        title=words["role"]))
    text = base.mark_text(align="left", dx=7, dy=-7, fontSize=12).encode(text="label:N")
    return localized(alt.layer(lines, heads, dots, text).resolve_scale(color="independent").properties(
        title=alt.TitleParams(title, subtitle=subtitle) if subtitle else title, width=size, height=size), lang)
