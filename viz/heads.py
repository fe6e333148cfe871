"""Charts of heads at work (heads page, chapters 04, 05): pure builders, arrays in, Altair or DataFrames out.

`grid` draws a layers x heads grid (a score per head, or the loss change when it is knocked out) as coloured
cells with the value written in each; `table` is the same grid as one sortable row per head; `losses` the loss
per position, the two copies of a repeated sequence in two colours (or one line on the reader's own text);
`patched` the activation-patching grid of layers x positions, the clean prompt's tokens on the x axis (lab's labels:
position, then the token made visible). Every label is passed in by the page (translated); token text is only ever
data, never an expression or HTML (Vega draws it as text; the tooltip escapes it).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from viz.format import localized

CELL = 34  # pixels per cell of the grid
NAMES = {"layer": "layer", "head": "head", "value": "score", "position": "position", "loss": "loss (bits)",
         "copy": "copy", "first": "first copy", "second": "second copy", "text": "text", "token": "token"}
PATCH_W = 46  # pixels per position of the patching grid: room for a short token label


def _names(names: dict | None) -> dict:
    return {**NAMES, **(names or {})}


def grid_frame(grid: np.ndarray) -> pd.DataFrame:
    """(L, H) -> one row per head: layer, head, value."""
    layers, heads_ = np.indices(grid.shape)
    return pd.DataFrame({"layer": layers.ravel(), "head": heads_.ravel(), "value": grid.ravel().astype(float)})


def grid(frame: pd.DataFrame, names: dict | None = None, diverging: bool = False, lang: str = "en") -> alt.Chart:
    """Layers (rows, layer 0 at the top) x heads (columns), each cell coloured by its value and labelled with it."""
    n = _names(names)
    scale = alt.Scale(scheme="redblue", domainMid=0, reverse=True) if diverging else alt.Scale(scheme="blues")
    base = alt.Chart(frame).encode(
        x=alt.X("head:O", title=n["head"]), y=alt.Y("layer:O", title=n["layer"]),
        tooltip=[alt.Tooltip("layer:O", title=n["layer"]), alt.Tooltip("head:O", title=n["head"]),
                 alt.Tooltip("value:Q", title=n["value"], format=".3f")])
    cells = base.mark_rect().encode(color=alt.Color("value:Q", title=n["value"], scale=scale))
    top = float(frame["value"].abs().max() or 1)
    labels = base.mark_text(fontSize=10).encode(
        text=alt.Text("value:Q", format=".2f"),
        color=alt.condition(f"abs(datum.value) > {top * 0.6}", alt.value("white"), alt.value("black")))
    width = CELL * int(frame["head"].max() + 1)
    return localized((cells + labels).properties(width=width, height=CELL * int(frame["layer"].max() + 1)), lang)


def table(frames: dict[str, np.ndarray], names: dict | None = None) -> pd.DataFrame:
    """One row per head ("2.3"), a column per grid (named by `frames`' keys), sortable in st.dataframe."""
    first = next(iter(frames.values()))
    layers, heads_ = np.indices(first.shape)
    n = _names(names)
    out = pd.DataFrame({n["layer"]: layers.ravel(), n["head"]: heads_.ravel()})
    for title, g in frames.items():
        out[title] = np.round(g.ravel().astype(float), 4)
    return out


def loss_frame(bits: np.ndarray, length: int | None, names: dict | None = None) -> pd.DataFrame:
    """One row per predicted token: position (of the token predicted, 1..T-1), loss in bits, which copy."""
    n = _names(names)
    pos = np.arange(1, len(bits) + 1)
    copy = [n["text"]] * len(bits) if length is None else [n["first"] if p <= length else n["second"] for p in pos]
    return pd.DataFrame({"position": pos, "loss": bits.astype(float), "copy": copy})


def losses(frame: pd.DataFrame, names: dict | None = None, lang: str = "en") -> alt.Chart:
    """The loss per position as a line with points, coloured by copy."""
    n = _names(names)
    chart = alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("position:Q", title=n["position"]), y=alt.Y("loss:Q", title=n["loss"]),
        color=alt.Color("copy:N", title=n["copy"], sort=None, legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("position:Q", title=n["position"]), alt.Tooltip("loss:Q", title=n["loss"], format=".2f"),
                 alt.Tooltip("copy:N", title=n["copy"])])
    return localized(chart.properties(height=240), lang)


def patch_frame(grid: np.ndarray, labels: list[str]) -> pd.DataFrame:
    """(L, T) scores and the T token labels -> one row per cell: layer, position, token (its label), value."""
    layers, pos = np.indices(grid.shape)
    return pd.DataFrame({"layer": layers.ravel(), "position": pos.ravel(),
                         "token": [labels[p] for p in pos.ravel()], "value": grid.ravel().astype(float)})


def patched(frame: pd.DataFrame, names: dict | None = None, lang: str = "en") -> alt.Chart:
    """Layers (rows, layer 0 at the top) x the prompt's tokens (columns, in order), each cell coloured by its score
    (0 white, 1 deep blue, below 0 red) with the score written in it."""
    n = _names(names)
    order = list(dict.fromkeys(frame.sort_values("position")["token"]))  # labels carry their position: unique
    base = alt.Chart(frame).encode(
        x=alt.X("token:N", sort=order, title=n["token"], axis=alt.Axis(labelAngle=-40, labelLimit=110)),
        y=alt.Y("layer:O", title=n["layer"]),
        tooltip=[alt.Tooltip("layer:O", title=n["layer"]), alt.Tooltip("token:N", title=n["token"]),
                 alt.Tooltip("value:Q", title=n["value"], format=".3f")])
    cells = base.mark_rect().encode(color=alt.Color("value:Q", title=n["value"],
                                                    scale=alt.Scale(scheme="redblue", domainMid=0, reverse=True)))
    top = float(frame["value"].abs().max() or 1)
    labels = base.mark_text(fontSize=10).encode(
        text=alt.Text("value:Q", format=".2f"),
        color=alt.condition(f"abs(datum.value) > {top * 0.6}", alt.value("white"), alt.value("black")))
    size = {"width": PATCH_W * len(order), "height": CELL * int(frame["layer"].max() + 1)}
    return localized((cells + labels).properties(**size), lang)
