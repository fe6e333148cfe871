"""Charts for the analogies page (chapter 02): the best answers as bars, and the analogy's 2D picture.

Pure builders: result rows or lab.embeddings.picture() in, alt.Chart out. Tokens are shown with a
visible space (␣king), and bars are placed by rank, never sorted by their text.
"""

from __future__ import annotations

import json
import math

import altair as alt
import pandas as pd

from lab.text import visible
from viz.format import localized

# Titles and role names; pages pass their own (translated) `names` to override any.
NAMES = {"rank": "rank", "token": "token", "score": "score", "x": "PC1", "y": "PC2", "role": "role",
         "a": "a", "b": "b", "c": "c", "target": "a − b + c", "result": "result", "expected": "expected",
         "a − b": "a − b", "c − b": "c − b"}
# Okabe & Ito's colour-blind-safe set (tests/test_colour.py): no pair told apart by red against green alone
ROLE_COLOURS = {"a": "#0072b2", "b": "#d55e00", "c": "#009e73", "target": "#111111", "result": "#e69f00",
                "expected": "#cc79a7"}
PAIR_COLOURS = {"a − b": "#444444", "c − b": "#bbbbbb"}
CHAR_PX, LINE_PX, DOT_PX = 7.6, 15.0, 6.0  # a 12 px label's widest average character, its line, a dot's radius
LABEL_ORDER = ("a", "b", "c", "target", "expected", "result")  # placed first, nearest their dots


def _box(px: float, py: float, dx: float, dy: float, width: float) -> tuple:
    """(left, top, right, bottom) of a label whose box starts dx, dy from its dot (left of it when dx < 0)."""
    left = px + dx if dx >= 0 else px + dx - width
    return left, py + dy - LINE_PX / 2, left + width, py + dy + LINE_PX / 2


def _overlap(a: tuple, b: tuple) -> float:
    """The area two boxes share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def label_places(px, py, labels, roles, size: int) -> list[tuple]:
    """Where each label's box goes, in pixels: (left, top, right, bottom), placed greedily (inputs first, then
    the expected word, then the results by rank) at the first spot near its dot that overlaps no label
    already placed and no dot, else where it overlaps least. Boxes stay inside the size x size plot."""
    order = sorted(range(len(labels)), key=lambda i: (LABEL_ORDER.index(roles[i]), i))
    dots = [(x - DOT_PX, y - DOT_PX, x + DOT_PX, y + DOT_PX) for x, y in zip(px, py, strict=True)]
    spots = [(r * math.cos(a), r * math.sin(a)) for r in (9, 20, 34, 50, 70, 95)
             for a in [math.radians(d) for d in (-30, 30, -150, 150, -90, 90, 0, 180)]]
    placed: dict[int, tuple] = {}
    for i in order:
        width = CHAR_PX * len(labels[i]) + 4
        best, cost = None, math.inf
        for dx, dy in spots:
            box = _box(px[i], py[i], dx, dy, width)
            if box[0] < 0 or box[1] < 0 or box[2] > size or box[3] > size:
                continue
            c = sum(_overlap(box, o) for o in placed.values()) + sum(_overlap(box, d) for d in dots)
            if c < cost:
                best, cost = box, c
            if c == 0:
                break
        placed[i] = best or _box(px[i], py[i], 9, 0, width)
    return [placed[i] for i in range(len(labels))]


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


def _label_frame(pts: pd.DataFrame, xs: tuple, ys: tuple, size: int) -> pd.DataFrame:
    """Each point's label placed (label_places) and back in data units: lx, ly (the box's left middle),
    ax, ay (where a leader line from the dot meets the box), moved (the box is far from its dot)."""
    to_px = size / (xs[1] - xs[0])
    px = [(x - xs[0]) * to_px for x in pts["x"]]
    py = [(ys[1] - y) * to_px for y in pts["y"]]  # pixels grow downwards
    boxes = label_places(px, py, list(pts["label"]), list(pts["role"]), size)
    out = pts[["x", "y", "label", "role"]].copy()
    out["lx"] = [xs[0] + b[0] / to_px for b in boxes]
    out["ly"] = [ys[1] - (b[1] + b[3]) / 2 / to_px for b in boxes]
    out["ax"] = [xs[0] + min(max(p, b[0]), b[2]) / to_px for p, b in zip(px, boxes, strict=True)]
    out["ay"] = out["ly"]
    out["moved"] = [math.dist((p, q), (min(max(p, b[0]), b[2]), (b[1] + b[3]) / 2)) > 16
                    for p, q, b in zip(px, py, boxes, strict=True)]
    return out


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
    lab = _label_frame(pts, (cx - half, cx + half), (cy - half, cy + half), size)
    xl, yl = alt.X("lx:Q", scale=sx), alt.Y("ly:Q", scale=sy)
    leaders = alt.Chart(lab[lab["moved"]]).mark_rule(strokeWidth=0.8, color="#888888", aria=False).encode(
        x=x, y=y, x2="ax:Q", y2="ay:Q")  # decorative: a moved label's line back to its dot
    text = alt.Chart(lab).mark_text(align="left", baseline="middle", fontSize=12).encode(
        x=xl, y=yl, text="label:N")
    return localized(alt.layer(lines, heads, leaders, dots, text).resolve_scale(color="independent").properties(
        title=alt.TitleParams(title, subtitle=subtitle) if subtitle else title, width=size, height=size), lang)
