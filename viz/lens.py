"""Charts of the logit lens (logit-lens page, chapter 05): pure builders, arrays in, Altair out.

`grid` draws layers (rows, the embeddings at the bottom) x positions (columns): each cell the token
that layer would predict next, coloured by its probability, the top 5 on hover. GRID_MAX columns, the
legend below and the column labels leaning left keep it inside a 1,280-pixel window with the sidebar
open (tests/test_browser_lens.py measures it in Chromium). A cell is one token: a guess that is a lone
byte of a character has no character to show, so the page words it (ui.token_words: "byte C3" in the cell,
what it is the first half of in the tooltip). `trace` follows one
target token up the layers: its rank (log scale, 1 at the top) and its probability. Token text is
only ever data (Vega draws it as text; the tooltip escapes it), never HTML.
"""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from lab.text import visible
from viz.format import localized, written

GRID_MAX = 16  # positions one grid shows at once (it fits 1,280 px); longer texts get a window and a note
CELL_W, CELL_H = 44, 22  # pixels per cell: room for a short token
CELL_CHARS = 6  # token characters printed in a cell (the tooltip has them all)
# Axis, legend and tooltip titles; pages pass their own (translated) `names` to override any.
NAMES = {"layer": "layer", "position": "position", "input": "input token", "top": "top token",
         "p": "probability", "embeddings": "embeddings", "rank": "rank of the target",
         "target_p": "probability of the target", "guess": "guess"}


def _names(names: dict | None) -> dict:
    """NAMES with the caller's overrides."""
    return {**NAMES, **(names or {})}


def prob_text(p: float, lang: str = "en") -> str:
    """A probability in three significant figures (0.334, 2.1e-05), with a decimal comma in Portuguese."""
    return written(f"{p:.3g}", lang)


def _short(token: str, n: int = CELL_CHARS) -> str:
    """A visible token cut to n characters (an ellipsis when cut) for a cell."""
    text = visible(token)
    return text if len(text) <= n else text[:n - 1] + "…"


def grid_frame(top_tokens: np.ndarray, top_p: np.ndarray, labels: list[str], offset: int = 0,
               lang: str = "en", cells: np.ndarray | None = None) -> pd.DataFrame:
    """Long form of a window of the lens: one row per (layer, position) with the top token, its
    probability, cell text and ink, and guess1..guessK ("token  p") for the tooltip.

    `top_tokens` (L+1, W, K) strings and `top_p` (L+1, W, K) are the window's cells; `labels` the W
    input-token labels; positions are numbered from `offset`. `cells` (L+1, W), when given, is each cell's
    own short text (a lone byte as "byte C3" where the tooltip words it in full), cut like the others.
    """
    n_layer, width, k = top_p.shape
    layer, col = np.divmod(np.arange(n_layer * width), width)
    p = top_p[layer, col, 0].astype(np.float64)
    frame = pd.DataFrame({"layer": layer, "position": col + offset, "input": [labels[c] for c in col],
                          "top": [visible(top_tokens[r, c, 0]) for r, c in zip(layer, col, strict=True)],
                          "text": [_short(top_tokens[r, c, 0]) if cells is None else _short(cells[r, c], 7)
                                   for r, c in zip(layer, col, strict=True)],
                          "p": p, "ink": np.where(p > 0.55, "#ffffff", "#111111")})
    for j in range(k):
        frame[f"guess{j + 1}"] = [f"{visible(top_tokens[r, c, j])}   {written(f'{top_p[r, c, j]:.3f}', lang)}"
                                  for r, c in zip(layer, col, strict=True)]
    return frame


def grid(frame: pd.DataFrame, labels: list[str], offset: int = 0, title: str = "", names: dict | None = None,
         lang: str = "en") -> alt.Chart:
    """Layers x positions, each cell the top token coloured by its probability; hover for the top K."""
    words = _names(names)
    k = sum(c.startswith("guess") for c in frame.columns)
    x_labels = f"{json.dumps(labels, ensure_ascii=False)}[datum.value - {offset}]"
    y_labels = f"datum.value == 0 ? {json.dumps(words['embeddings'], ensure_ascii=False)} : datum.value"
    base = alt.Chart(frame, title=title).encode(
        x=alt.X("position:O", title=words["position"],
                axis=alt.Axis(labelExpr=x_labels, labelAngle=40, labelAlign="right", labelLimit=110, labelOverlap=False,
                              orient="top")),  # labels end at their column, leaning left: the last one fits
        y=alt.Y("layer:O", sort="descending", title=words["layer"], axis=alt.Axis(labelExpr=y_labels)),
        tooltip=[alt.Tooltip("input:N", title=words["input"]), alt.Tooltip("layer:O", title=words["layer"]),
                 *[alt.Tooltip(f"guess{j + 1}:N", title=f"{words['guess']} {j + 1}") for j in range(k)]])
    cells = base.mark_rect(stroke="#ffffff", strokeWidth=0.5).encode(
        color=alt.Color("p:Q", title=words["p"], scale=alt.Scale(scheme="blues", domain=[0, 1]),
                        legend=alt.Legend(orient="bottom", direction="horizontal", labelLimit=0)))
    text = base.mark_text(fontSize=10).encode(text="text:N", color=alt.Color("ink:N", scale=None))
    return localized((cells + text).resolve_scale(color="independent").properties(
        width=alt.Step(CELL_W), height=alt.Step(CELL_H)), lang)


def trace_frame(rank, p) -> pd.DataFrame:
    """The target's rank and probability per layer, one row per layer."""
    return pd.DataFrame({"layer": np.arange(len(rank)), "rank": np.asarray(rank, np.int64),
                         "p": np.asarray(p, np.float64)})


def trace(frame: pd.DataFrame, title: str = "", names: dict | None = None, lang: str = "en") -> alt.Chart:
    """The target's rank (log scale, rank 1 at the top) and probability, layer by layer, side by side."""
    words = _names(names)
    x = alt.X("layer:O", title=words["layer"], axis=alt.Axis(labelAngle=0, labelExpr=(
        f"datum.value == 0 ? {json.dumps(words['embeddings'], ensure_ascii=False)} : datum.value")))
    tip = [alt.Tooltip("layer:O", title=words["layer"]), alt.Tooltip("rank:Q", title=words["rank"]),
           alt.Tooltip("p:Q", title=words["target_p"], format=".4f")]
    base = alt.Chart(frame).encode(x=x, tooltip=tip)
    top = int(max(frame["rank"].max(), 10))
    rank = base.mark_line(point=True).encode(y=alt.Y("rank:Q", title=words["rank"], scale=alt.Scale(
        type="log", reverse=True, domain=[1, top]))).properties(width=320, height=220)
    prob = base.mark_line(point=True, color="#e45756", strokeDash=[6, 3]).encode(  # dashed: not colour alone
        y=alt.Y("p:Q", title=words["target_p"], scale=alt.Scale(domain=[0, 1]))).properties(width=320, height=220)
    return localized(alt.hconcat(rank, prob, title=title), lang)
