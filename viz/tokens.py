"""Views for the tokenization page: cost tables, the premium chart, and tokens as escaped HTML chips."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd

from lab.text import visible
from viz.format import localized, number

# Soft backgrounds that alternate between neighbouring chips so token borders are easy to see.
PALETTE = ("#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#e0e7ff")
SPLIT_COLOUR = "#fed7aa"  # a token holding part of a UTF-8 character
METRICS = ("tokens", "words", "chars", "tokens_per_word", "chars_per_token")


def costs_frame(costs: dict[str, dict], labels: dict[str, str] | None = None, lang: str = "en") -> pd.DataFrame:
    """One row per metric, one column per encoding (token_costs output), values as `lang` writes them."""
    labels = labels or {}
    rows = {labels.get(m, m): [number(c[m], lang) for c in costs.values()] for m in METRICS}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(costs))


def token_chips(records: list[dict], limit: int | None = None, total: int | None = None,
                lang: str = "en") -> str:
    """Tokens as HTML chips (text over id); every piece of text is escaped, split bytes shown as \\xc3.

    `total` is the text's token count when `records` holds only the first ones (default: len(records)).
    """
    chips = []
    for r in records[:limit]:
        hexes = " ".join(f"{b:02x}" for b in r["bytes"])
        colour = SPLIT_COLOUR if r["splits_char"] else PALETTE[r["position"] % len(PALETTE)]
        border = "1px dashed #c2410c" if r["splits_char"] else "1px solid #cbd5e1"
        part = " · parte de um caractere UTF-8" if lang == "pt" else " · part of a UTF-8 character"
        title = f"id {r['id']} · bytes {hexes}" + (part if r["splits_char"] else "")
        chips.append(
            f'<span class="tok-chip" title="{html.escape(title, quote=True)}" style="display:inline-flex;'
            f"flex-direction:column;align-items:center;margin:2px;padding:2px 5px;border-radius:5px;"
            f'background:{colour};border:{border};font-family:monospace;line-height:1.2;color:#111">'
            f'<span style="white-space:pre">{html.escape(visible(r["text"]))}</span>'
            f'<span style="font-size:0.7em;color:#475569">{r["id"]}</span></span>')
    more = (len(records) if total is None else total) - len(chips)
    tail = f'<span style="margin-left:6px;color:#64748b">… +{number(more, lang)}</span>' if more > 0 else ""
    return f'<div class="tok-chips" style="display:flex;flex-wrap:wrap">{"".join(chips)}{tail}</div>'


def premium_frame(premiums: dict[str, dict[str, float | None]]) -> pd.DataFrame:
    """Long form (source, encoding, premium) from {source label: {encoding: premium}}; None dropped."""
    rows = [{"source": source, "encoding": name, "premium": value}
            for source, by_encoding in premiums.items() for name, value in by_encoding.items()
            if value is not None]
    return pd.DataFrame(rows, columns=["source", "encoding", "premium"])


def premium_chart(df: pd.DataFrame, title: str = "", y_title: str = "pt tokens ÷ en tokens",
                  lang: str = "en") -> alt.Chart:
    """Grouped bars of the premium per encoding and source, with a rule at 1.0 (no premium).

    Bar labels, tooltips and the axis's numbers are written as `lang` writes them (2,20 in pt).
    """
    encodings = list(dict.fromkeys(df["encoding"]))
    sources = list(dict.fromkeys(df["source"]))
    df = df.assign(shown=[number(float(p), lang) for p in df["premium"]])
    base = alt.Chart(df).encode(
        x=alt.X("encoding:N", sort=encodings, title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("source:N", sort=sources),
        y=alt.Y("premium:Q", title=y_title, scale=alt.Scale(domainMin=0)),
    )
    bars = base.mark_bar().encode(
        color=alt.Color("source:N", sort=sources, title=None, legend=alt.Legend(orient="bottom", labelLimit=0)),
        tooltip=["source", "encoding", alt.Tooltip("shown:N", title=y_title)],
    )
    labels = base.mark_text(dy=-6, fontSize=11).encode(text="shown:N")
    parity = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(y="y:Q")
    return localized((bars + labels + parity).properties(title=title, height=300), lang)


def costliest_frame(rows: list[dict], labels: tuple[str, str, str] = ("word", "tokens", "pieces")) -> pd.DataFrame:
    """The costliest-words table: word, token count, pieces joined by · (spaces shown as ␣)."""
    return pd.DataFrame([(r["word"], r["tokens"], " · ".join(visible(p) for p in r["pieces"])) for r in rows],
                        columns=list(labels))
