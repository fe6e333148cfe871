"""The detector page's views (chapter 12): the text coloured by rank bucket (GLTR's colours), the bucket
histogram, a score on the human and machine distributions, the ROC curve with its operating point.
Pure builders: words come in as arguments; every piece of text in the HTML view is escaped."""

from __future__ import annotations

import html

import altair as alt
import numpy as np
import pandas as pd

from viz.format import localized, number

# GLTR's green, yellow, red, purple, in lightnesses that stay apart under deuteranopia and protanopia
COLOURS = ("#b7ebae", "#f5d742", "#f4826f", "#c9a7f0")
CLASS = "det-b"


def bucket_css() -> str:
    """The four bucket classes (det-b0 .. det-b3) and the joined-character underline, once per page."""
    rules = [f".{CLASS}{i}{{background:{c};color:#111;border-radius:3px;padding:0 1px}}" for i, c in enumerate(COLOURS)]
    rules.append(".det-joined{text-decoration:underline dotted}")
    return "<style>" + "\n".join(rules) + "</style>"


def _quoted(token: str) -> str:
    """A token's text between quotes as the reader reads it (repr would write a no-break space as \\xa0)."""
    return "'" + token + "'"


def _tip(run_tokens: list[dict], lang: str, rank_word: str, top_word: str) -> str:
    parts = []
    for t in run_tokens:
        top = ", ".join(f"{_quoted(x['token'])} {number(x['p'], lang)}" for x in t["top"])
        parts.append(f"{_quoted(t['token'])}: {rank_word} {number(t['rank'], lang)}, p {number(t['p'], lang, 4)} · "
                     f"{top_word}: {top}")
    return "\n".join(parts)


def colored_html(runs: list[dict], tokens: list[dict], lang: str, rank_word: str = "rank",
                 top_word: str = "top") -> str:
    """The text as lab.text.readable runs, each scored run shaded by its worst (highest) bucket; a title with
    each token's rank, probability and the model's top predictions. The first token (no context) is plain."""
    by_position = {t["position"]: t for t in tokens}
    parts = []
    for run in runs:
        scored = [by_position[p] for p in range(run["start"], run["stop"]) if p in by_position]
        text = html.escape(run["text"])
        if not scored:
            parts.append(text)
            continue
        cls = f"{CLASS}{max(t['bucket'] for t in scored)}" + (" det-joined" if run["joined"] else "")
        tip = html.escape(_tip(scored, lang, rank_word, top_word), quote=True)
        parts.append(f'<span class="{cls}" title="{tip}">{text}</span>')
    return f'<div class="det-text" style="line-height:1.9;white-space:pre-wrap">{"".join(parts)}</div>'


def bucket_chart(fractions: dict[str, float], names: list[str], title: str, axis: str, lang: str) -> alt.Chart:
    """GLTR's histogram: the share of tokens in each bucket, in the buckets' colours."""
    frame = pd.DataFrame({"bucket": names, "share": list(fractions.values()), "order": range(len(names))})
    return localized(alt.Chart(frame, title=title).mark_bar().encode(
        x=alt.X("bucket:N", sort=names, title=None, axis=alt.Axis(labelAngle=0, labelLimit=200)),
        y=alt.Y("share:Q", title=axis, axis=alt.Axis(format="%")),
        color=alt.Color("bucket:N", scale=alt.Scale(domain=names, range=list(COLOURS)), legend=None),
        tooltip=[alt.Tooltip("bucket:N"), alt.Tooltip("share:Q", format=".1%")]).properties(height=220), lang)


def distribution_chart(hist: dict, names: dict[str, str], marks: dict[str, float], title: str, axis: str,
                       share_axis: str, lang: str) -> alt.Chart:
    """Histograms of one score for human and machine texts (lab.detect.evaluation.histogram: the bins and each
    group's share of its own texts), named by `names` ({"human": ..., "machine": ...}), with vertical rules at
    `marks` ({label: value}: this text, the threshold)."""
    edges = hist["edges"]
    values = pd.DataFrame([{"start": a, "end": b, "who": names[who], "share": share} for who in ("machine", "human")
                           for a, b, share in zip(edges[:-1], edges[1:], hist[who], strict=True)])
    bars = alt.Chart(values).mark_bar(opacity=0.55, binSpacing=0).encode(
        x=alt.X("start:Q", bin="binned", title=axis), x2="end:Q",
        y=alt.Y("share:Q", stack=None, title=share_axis, axis=alt.Axis(format="%")),
        color=alt.Color("who:N", scale=alt.Scale(range=["#4c78a8", "#e45756"]), title=None,
                        legend=alt.Legend(orient="top", labelLimit=0)))
    rules = pd.DataFrame({"label": list(marks), "value": list(marks.values())})
    lines = alt.Chart(rules).mark_rule(strokeWidth=2, color="#222").encode(x="value:Q")
    words = alt.Chart(rules).mark_text(align="left", dx=4, dy=-6, baseline="bottom").encode(
        x="value:Q", y=alt.value(0), text="label:N")
    return localized(alt.layer(bars, lines, words, title=title).properties(height=240), lang)


def step_corners(fpr, tpr) -> tuple[np.ndarray, np.ndarray]:
    """The points a rising curve drawn step-after (across, then up) turns at: the first and last, and each point
    reached by a move with some rise and left by a move with some run. Between two of them the line goes across,
    then up, through every other point, so it is drawn the same without them. The ROC of the detector's 1,430 texts
    has 1,431 points; the chart sends its corners only."""
    x, y = np.asarray(fpr, dtype=float), np.asarray(tpr, dtype=float)
    if len(x) < 3:
        return x, y
    keep = np.concatenate([[True], (np.diff(y)[:-1] != 0) & (np.diff(x)[1:] != 0), [True]])
    return x[keep], y[keep]


def roc_chart(curve: dict[str, np.ndarray], point: tuple[float, float], title: str, fpr_axis: str, tpr_axis: str,
              lang: str) -> alt.Chart:
    """The ROC curve (false- against true-positive rate), the diagonal of chance and the chosen threshold's point."""
    fpr, tpr = step_corners(curve["fpr"], curve["tpr"])
    line = alt.Chart(pd.DataFrame({"fpr": fpr, "tpr": tpr})).mark_line(interpolate="step-after").encode(
        x=alt.X("fpr:Q", title=fpr_axis, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y=alt.Y("tpr:Q", title=tpr_axis, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")))
    chance = alt.Chart(pd.DataFrame({"fpr": [0, 1], "tpr": [0, 1]})).mark_line(strokeDash=[4, 4], color="#999").encode(
        x="fpr:Q", y="tpr:Q")
    here = alt.Chart(pd.DataFrame({"fpr": [point[0]], "tpr": [point[1]]})).mark_point(
        size=120, filled=True, color="#e45756").encode(x="fpr:Q", y="tpr:Q")
    return localized(alt.layer(chance, line, here, title=title).properties(height=260, width=300), lang)
