"""Views for the attention and causal-mask pages: heatmaps, an all-heads overview image, bar charts.

Heatmaps encode token positions on the axes and show the tokens as labels (labelExpr), so
repeated tokens stay apart and nothing is sorted alphabetically. The all-heads overview is one
PNG drawn with numpy + Pillow: 12 x 12 heads x 64 x 64 cells would be 590k rows for Altair.
"""

from __future__ import annotations

import io
import json

import altair as alt
import numpy as np
import pandas as pd
from PIL import Image, ImageDraw

from viz.format import localized, number, written

HEATMAP_MAX = 64  # tokens per axis a heatmap shows legibly
OVERVIEW_CELL = 56  # pixels per head in the all-heads overview
CELL_TEXT_PX = 20  # cells at least this many pixels wide also print their value (where it fits: grid_frame)
CELL_FONT_PX = 9  # the cells' font size
AXES_PX = 170  # what axis labels, legend and title take from a chart's size
SUMMARIES = ("entropy", "previous", "first", "self")  # per-head numbers of summary_frame
MASKED_COLOUR = "#d4d4d8"
MINUS_INF = "−∞"
DIVERGING = ("purpleorange", "redblue", "blueorange")  # dark at both ends
# Axis, legend and tooltip titles; pages pass their own (translated) `names` to override any.
NAMES = {"query": "query", "key": "key", "query_axis": "query (looking)", "key_axis": "key (looked at)",
         "weight": "weight", "layer": "layer", "head": "head", "entropy": "entropy (bits)",
         "previous": "previous token", "first": "first token", "self": "itself",
         "diff": "max |difference|", "series": "run"}


def _names(names: dict | None) -> dict:
    """NAMES with the caller's overrides."""
    return {**NAMES, **(names or {})}


ROW_LABEL_GAP = 2  # px Vega keeps between row labels: its boxes are the font size, the drawn glyphs a little more


def _axis(title: str, labels: list[str], offset: int, angle: int = 0) -> alt.Axis:
    """An axis over positions offset.. that shows each position's token label. Past ~20 tokens the labels no longer
    fit their cells: the keys' stand on end (`angle` -90) and Vega thins what still would touch (greedy: every other
    label, and so on), never drawing one over another; the tooltip names every cell's tokens."""
    return alt.Axis(title=title, labelExpr=f"{json.dumps(labels, ensure_ascii=False)}[datum.value - {offset}]",
                    labelLimit=120, labelOverlap="greedy", labelSeparation=6 if angle else ROW_LABEL_GAP,
                    labelAngle=angle, labelFlush=False)  # flush would nudge the first label onto the second


def _cell(x: float, digits: int = 2, lang: str = "en") -> str:
    """A weight or score as compact cell text: exact zeros as 0 and exact ones as 1, −∞ as such, 0.07 (0,07 in pt:
    the leading zero a reader writes, issue 48), tens without decimals (−12), and a value too small for `digits` as
    <0.01 (>−0.01 below zero): never 0, which only exact zeros print, and never 1e-07."""
    if x == float("-inf"):
        return MINUS_INF
    if x in (0, 1):
        return str(int(x))
    step = 10.0 ** -digits
    if abs(x) < step / 2:  # would round to 0
        tiny = f"{step:.{digits}f}"
        return written(f"<{tiny}" if x > 0 else f">−{tiny}", lang)
    text = f"{x:.0f}" if abs(x) >= 10 else f"{x:.{digits}f}"
    text = text.replace("-", "−")
    return written(text, lang)


# Widths of cell text in ems, as Chromium measures its sans-serif (canvas measureText: digits 0.557 em):
# is a cell's text narrower than the cell?
_EM = {".": 0.28, ",": 0.28, "<": 0.585, ">": 0.585, "−": 0.585, "∞": 0.72}


def text_px(text: str, font_px: float = CELL_FONT_PX) -> float:
    """About how many pixels wide `text` is at `font_px` (digits 0.557 em; the rest from _EM)."""
    return font_px * sum(_EM.get(c, 0.557) for c in text)


def grid_frame(values: np.ndarray, labels: list[str], offset: int = 0, diverging: bool = False,
               digits: int = 2, lang: str = "en", cell_px: float | None = None) -> pd.DataFrame:
    """Long form of a (Q, K) array: query, key (absolute positions), tokens, value, text, masked, ink, and
    `fits` (the text is narrower than a `cell_px`-wide cell, with a pixel to spare each side; all, without it)."""
    nq, nk = values.shape
    q, k = np.divmod(np.arange(nq * nk), nk)
    flat = values.reshape(-1).astype(np.float64)
    masked = np.isneginf(flat)
    value = np.where(masked, np.nan, flat)
    lo, hi = (np.nanmin(value), np.nanmax(value)) if not masked.all() else (0.0, 0.0)
    norm = (value - lo) / (hi - lo) if hi > lo else np.zeros_like(flat)
    dark = np.abs(norm - 0.5) > 0.3 if diverging else norm > 0.6  # dark cell: white ink
    text = [_cell(x, digits, lang) for x in flat]
    fits = [cell_px is None or text_px(s) <= cell_px - 2 for s in text]
    return pd.DataFrame({"query": q + offset, "key": k + offset,
                         "query_token": [labels[i] for i in q], "key_token": [labels[i] for i in k],
                         "value": value, "text": text, "masked": masked,
                         "ink": np.where(dark, "#ffffff", "#111111"), "fits": fits})


def heatmap(values: np.ndarray, labels: list[str], title: str = "", offset: int = 0,
            value_title: str | None = None, scheme: str = "blues", size: int = 560, digits: int = 2,
            names: dict | None = None, lang: str = "en") -> alt.Chart:
    """One head as query x key cells (mark_rect + mark_text); −∞ cells grey, value on hover.

    `values` is (Q, K) for tokens offset..offset+Q; `labels` their axis labels; `size` the whole
    chart's pixels. Cells print their value when they are wide enough to read.
    """
    words = _names(names)
    value_title = value_title or words["weight"]
    n = max(values.shape)
    cell_px = (size - AXES_PX) / n
    df = grid_frame(values, labels, offset, diverging=scheme in DIVERGING, digits=digits, lang=lang, cell_px=cell_px)
    base = alt.Chart(df, title=title).encode(
        x=alt.X("key:O", axis=_axis(words["key_axis"], labels, offset, angle=-90)),
        y=alt.Y("query:O", axis=_axis(words["query_axis"], labels, offset)),
        tooltip=[alt.Tooltip("query_token:N", title=words["query"]), alt.Tooltip("key_token:N", title=words["key"]),
                 alt.Tooltip("text:N", title=value_title)])
    cells = base.transform_filter("!datum.masked").mark_rect().encode(
        color=alt.Color("value:Q", title=value_title, scale=alt.Scale(scheme=scheme)))
    masked = base.transform_filter("datum.masked").mark_rect(color=MASKED_COLOUR)  # −∞: no colour scale
    chart = masked + cells if df["masked"].any() else alt.layer(cells)  # no empty mark group for screen readers
    if cell_px >= CELL_TEXT_PX:  # each cell's value where it fits: never over its neighbour's
        text = base.transform_filter("datum.fits").mark_text(fontSize=CELL_FONT_PX).encode(
            text="text:N", color=alt.Color("ink:N", scale=None))
        chart = (chart + text).resolve_scale(color="independent")  # text ink has no scale of its own
    return localized(chart.properties(width=size, height=size), lang)


def _ramp(x: np.ndarray) -> np.ndarray:
    """Values in [0, 1] -> RGB uint8 from white to dark blue."""
    lo, hi = np.array([255, 255, 255], float), np.array([8, 48, 107], float)
    return (lo + (hi - lo) * x[..., None]).astype(np.uint8)


def _shrink(a: np.ndarray, n: int) -> np.ndarray:
    """Block-average a (T, T) array down to at most (n, n)."""
    t = a.shape[0]
    if t <= n:
        return a
    edges = np.linspace(0, t, n + 1).astype(int)[:-1]
    sums = np.add.reduceat(np.add.reduceat(a, edges, axis=0), edges, axis=1)
    counts = np.diff(np.append(edges, t))
    return sums / np.outer(counts, counts)


def overview_tile(a: np.ndarray, cell: int = OVERVIEW_CELL) -> np.ndarray:
    """One head's (T, T) weights as a (cell, cell) image in [0, 1], scaled to its own maximum.

    Every token shows: longer texts are block-averaged down to cell tokens; shorter ones are
    enlarged by index mapping (pixel p shows token p * T // cell), never cut.
    """
    a = _shrink(a.astype(np.float64), cell)  # (n, n), n <= cell
    idx = np.arange(cell) * a.shape[0] // cell  # (cell,): the token under each pixel
    tile = a[np.ix_(idx, idx)]  # (cell, cell)
    top = tile.max()
    return tile / top if top > 0 else tile


def overview_image(tiles: np.ndarray, gap: int = 4, margin: int = 28) -> bytes:
    """Tiles [layer, head, cell, cell] (overview_tile) laid out in a layer x head grid; PNG bytes."""
    n_layer, n_head, cell, _ = tiles.shape
    step = cell + gap
    img = np.full((margin + n_layer * step, margin + n_head * step, 3), 255, np.uint8)
    for layer in range(n_layer):
        for head in range(n_head):
            y, x = margin + layer * step, margin + head * step
            img[y:y + cell, x:x + cell] = _ramp(tiles[layer, head])
    picture = Image.fromarray(img)
    draw = ImageDraw.Draw(picture)
    for layer in range(n_layer):
        draw.text((2, margin + layer * step + cell // 2 - 5), f"L{layer}", fill=(60, 60, 60))
    for head in range(n_head):
        draw.text((margin + head * step + cell // 2 - 8, 8), f"H{head}", fill=(60, 60, 60))
    buf = io.BytesIO()
    picture.save(buf, format="PNG")
    return buf.getvalue()


def overview_png(att: np.ndarray, cell: int = OVERVIEW_CELL) -> bytes:
    """Every head of att [layer, head, T, T] as a small image in a layer x head grid; PNG bytes."""
    return overview_image(np.array([[overview_tile(h, cell) for h in layer] for layer in att]))


def summary_frame(rows: list[dict]) -> pd.DataFrame:
    """The per-head summaries (lab.attention.head_summary) as a sortable DataFrame."""
    return pd.DataFrame(rows, columns=["layer", "head", "entropy", "previous", "first", "self"])


def summary_order(frame: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """The per-head table in the order the page shows it: the highest `by` first (a stable sort: ties keep
    layer, head order), numbered 0.. again; as it is without `by`."""
    if by is None:
        return frame
    return frame.sort_values(by, ascending=False, kind="stable").reset_index(drop=True)


def summary_shown(frame: pd.DataFrame, lang: str = "en", by: str | None = None) -> pd.DataFrame:
    """The per-head table as the page shows it: the highest `by` first (summary_order), and in Portuguese the
    summaries as text, 0,137 (Streamlit would write 0.137). Every value has one shape (d,ddd), so sorting the
    text sorts the numbers."""
    frame = summary_order(frame, by)
    if lang == "en":
        return frame
    shown = frame.copy()
    for c in SUMMARIES:
        shown[c] = [number(float(v), lang, 3) for v in frame[c]]
    return shown


def summary_grid(frame: pd.DataFrame, metric: str, title: str = "", names: dict | None = None,
                 lang: str = "en") -> alt.Chart:
    """Layer x head cells coloured by one per-head summary; click a cell to pick that head."""
    words = _names(names)
    pick = alt.selection_point(name="pick", fields=["layer", "head"], on="click")
    return localized(alt.Chart(frame, title=title).mark_rect(stroke="#fff").encode(
        x=alt.X("head:O", title=words["head"], axis=alt.Axis(labelAngle=0)), y=alt.Y("layer:O", title=words["layer"]),
        color=alt.Color(f"{metric}:Q", title=words[metric], scale=alt.Scale(scheme="viridis")),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.55)),
        tooltip=[alt.Tooltip("layer:O", title=words["layer"]), alt.Tooltip("head:O", title=words["head"]),
                 alt.Tooltip(f"{metric}:Q", title=words[metric], format=".3f")],
    ).add_params(pick).properties(width=alt.Step(26), height=alt.Step(20)), lang)


def diff_text(d: float, digits: int = 3, lang: str = "en") -> str:
    """A max |difference| to read at a glance: an exact zero as 0.0 (0,0 in pt), anything else never rounded to 0."""
    return written("0.0" if d == 0 else f"{d:.{digits}g}", lang)


def diff_bars(series: dict[str, list[float]], title: str = "", names: dict | None = None,
              lang: str = "en") -> alt.Chart:
    """Per-layer max |difference|, one bar group per layer, one colour per series; exact zeros labelled."""
    words = _names(names)
    df = pd.DataFrame([{"series": name, "layer": i, "diff": d, "text": diff_text(d, 2, lang)}
                       for name, values in series.items() for i, d in enumerate(values)])
    base = alt.Chart(df, title=title).encode(
        x=alt.X("layer:O", title=words["layer"], axis=alt.Axis(labelAngle=0)), xOffset="series:N",
        y=alt.Y("diff:Q", title=words["diff"]),
        tooltip=[alt.Tooltip("series:N", title=words["series"]), alt.Tooltip("layer:O", title=words["layer"]),
                 alt.Tooltip("text:N", title=words["diff"])])
    bars = base.mark_bar().encode(color=alt.Color("series:N", title=None, legend=alt.Legend(
        orient="bottom", labelLimit=0)))
    text = base.transform_filter("datum.diff == 0").mark_text(dy=-6, fontSize=9).encode(text="text:N")  # exact 0
    return localized((bars + text).properties(height=260), lang)
