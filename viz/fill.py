"""The fill-in-the-blank page's views (chapters 09-11): each mask's candidates, the encoder against the decoder
over every position, the masking pattern of each epoch; the filled sentence and the masked tokens as escaped
HTML. Pure builders; chart words passed in."""

from __future__ import annotations

import html
import json

import altair as alt
import numpy as np
import pandas as pd

from viz.format import localized

ACTION_COLOURS = {"mask": "#4c78a8", "random": "#f58518", "kept": "#72b7b2", None: "#e4e4e7"}  # apart under CVD
FILLED = "#ffe58a"


def candidates(rows: list[dict], title: str, p_title: str, lang: str = "en") -> alt.Chart:
    """One mask's candidates as bars, best first (sorted by value in the chart, as viz.code.top_logits)."""
    frame = pd.DataFrame({"rank": range(1, len(rows) + 1), "p": [r["p"] for r in rows],
                          "token": [json.dumps(r["token"], ensure_ascii=False)[1:-1] for r in rows]})
    chart = alt.Chart(frame, title=title).mark_bar().encode(
        y=alt.Y("token:N", sort="-x", title=None), x=alt.X("p:Q", title=p_title, axis=alt.Axis(format="%")),
        tooltip=["rank:O", "token:N", alt.Tooltip("p:Q", format=".2%")])
    return localized(chart.properties(height=32 * len(rows) + 70), lang)  # the height holds the axes too


def compare_frame(positions: list[dict], labels: list[str], encoder: str, decoder: str) -> pd.DataFrame:
    """Long form: position, token, model, p (the decoder's first position left out)."""
    rows = [{"position": i, "token": labels[i], "model": name, "p": r[key]}
            for i, r in enumerate(positions) for name, key in ((encoder, "encoder_p"), (decoder, "decoder_p"))
            if r[key] is not None]
    return pd.DataFrame(rows, columns=["position", "token", "model", "p"])


def compare_chart(frame: pd.DataFrame, labels: list[str], best: list[int], title: str, y_title: str,
                  lang: str = "en") -> alt.Chart:
    """Each token's probability under both models (log scale), the positions where the right context helped
    most shaded."""
    axis = alt.Axis(title=None, labelExpr=f"{json.dumps(labels, ensure_ascii=False)}[datum.value]", labelAngle=-60,
                    labelOverlap=False, values=list(range(len(labels))))
    shade = alt.Chart(pd.DataFrame({"position": best, "p": 1.0, "floor": 1e-6})).mark_bar(
        color=FILLED, opacity=0.7, size=14).encode(x=alt.X("position:Q"), y="p:Q", y2="floor:Q")
    lines = alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("position:Q", axis=axis, scale=alt.Scale(domain=[-0.5, len(labels) - 0.5])),
        y=alt.Y("p:Q", title=y_title, scale=alt.Scale(type="log", domain=[1e-6, 1], clamp=True),
                axis=alt.Axis(format="~e")),
        color=alt.Color("model:N", title=None, legend=alt.Legend(orient="top", labelLimit=400)),
        strokeDash=alt.StrokeDash("model:N", title=None), shape=alt.Shape("model:N", title=None),  # not colour alone
        tooltip=["token:N", "model:N", alt.Tooltip("p:Q", format=".3%")])
    return localized(alt.layer(shade, lines, title=title).properties(height=420), lang)


def masking_grid(tokens: list[str], epochs: list[list[str | None]], words: dict, title: str, epoch_title: str,
                 lang: str = "en") -> alt.Chart:
    """Epochs × tokens: what training asked about each token in each epoch (words: action -> its name)."""
    rows = [{"epoch": e + 1, "position": i, "token": tokens[i], "action": words[a]}
            for e, actions in enumerate(epochs) for i, a in enumerate(actions)]
    axis = alt.Axis(title=None, labelExpr=f"{json.dumps(tokens, ensure_ascii=False)}[datum.value]", labelAngle=-60,
                    labelOverlap=False)
    chart = alt.Chart(pd.DataFrame(rows), title=title).mark_rect(stroke="white").encode(
        x=alt.X("position:O", axis=axis), y=alt.Y("epoch:O", title=epoch_title),
        color=alt.Color("action:N", title=None, legend=alt.Legend(orient="top", labelLimit=0),  # 0: never cut
                        scale=alt.Scale(domain=[words[a] for a in ACTION_COLOURS],
                                        range=list(ACTION_COLOURS.values()))),
        tooltip=["epoch:O", "token:N", "action:N"])
    return localized(chart.properties(height=26 * len(epochs) + 150), lang)  # rotated token labels below


def sentence_html(runs: list[tuple[str, bool]]) -> str:
    """The text with each mask's best candidate marked (escaped)."""
    parts = [f'<mark class="fill-best" style="background:{FILLED}">{html.escape(s)}</mark>' if filled
             else html.escape(s) for s, filled in runs]
    return f'<div class="fill-sentence" style="font-size:1.15em;line-height:1.8">{"".join(parts)}</div>'


def chips_html(tokens: list[str], actions: list[str | None], shown: dict) -> str:
    """One epoch's tokens as chips coloured by what training did to each (escaped); `shown` maps an action to
    what the model saw in its place ("<mask>", "random token")."""
    chips = []
    for token, action in zip(tokens, actions, strict=True):
        colour = ACTION_COLOURS[action]
        ink = "#ffffff" if action == "mask" else "#111111"  # 4.6:1 on the blue; 7.4:1 on the orange (white: 2.55)
        label = html.escape(token.replace(" ", "␣"))
        seen = f' title="{html.escape(shown[action], quote=True)}"' if action else ""
        chips.append(f'<span class="fill-chip" data-action="{action or "none"}"{seen} style="background:{colour};'
                     f'color:{ink};padding:2px 5px;margin:2px;border-radius:4px;display:inline-block">{label}</span>')
    return f'<div class="fill-chips">{"".join(chips)}</div>'


def top_gains(gain: list[float | None], n: int = 3) -> list[int]:
    """The n positions where the right context helped most (largest gain), best first."""
    scored = [(g, i) for i, g in enumerate(gain) if g is not None and np.isfinite(g)]
    return [i for _, i in sorted(scored, reverse=True)[:n]]
