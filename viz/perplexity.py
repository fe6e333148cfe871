"""Views for the perplexity page: the comparison table and chart, the offline scale curve, surprisal as text."""

from __future__ import annotations

import html
import math

import altair as alt
import numpy as np
import pandas as pd

from viz.format import localized, number

SURPRISE_MAX_BITS = 16.0  # colour scale's top: a token the model gave 1 / 65,536 or less


def results_frame(results: list[dict], labels: dict[str, str]) -> pd.DataFrame:
    """One row per evaluated model, smallest first: the contract's numbers plus size and kind."""
    rows = [{"model": r["model"], "params": r.get("params") or 0, "tokens": r["tokens"], "ppl": r["ppl"],
             "bits_per_byte": r["bits_per_byte"], "ppl_per_word": r["ppl_per_word"],
             "kind": "pseudo" if r.get("pseudo") else "decoder"} for r in results]
    frame = pd.DataFrame(rows, columns=["model", "params", "tokens", "ppl", "bits_per_byte", "ppl_per_word", "kind"])
    frame = frame.sort_values("params", kind="stable").reset_index(drop=True)
    frame["label"] = [labels.get(m, m) for m in frame["model"]]
    return frame


def shown_table(frame: pd.DataFrame, headers: dict[str, str], lang: str, pseudo_note: str) -> pd.DataFrame:
    """The table as the page shows it: numbers written the reader's way, headers in the reader's language."""
    out = pd.DataFrame({
        headers["model"]: frame["model"],
        headers["params"]: [number(int(p), lang) if p else "—" for p in frame["params"]],
        headers["tokens"]: [number(int(n), lang) for n in frame["tokens"]],
        headers["ppl"]: [number(float(v), lang) for v in frame["ppl"]],
        headers["bits_per_byte"]: [number(float(v), lang, 3) for v in frame["bits_per_byte"]],
        headers["ppl_per_word"]: [number(float(v), lang) for v in frame["ppl_per_word"]],
        headers["note"]: [pseudo_note if k == "pseudo" else "" for k in frame["kind"]],
    })
    return out


def bits_chart(frame: pd.DataFrame, title: str, y_title: str, legend: dict[str, str], lang: str = "en") -> alt.Chart:
    """Bits per byte per model, ordered by size; encoders' pseudo values in another colour."""
    df = frame.assign(kind_label=[legend[k] for k in frame["kind"]])
    base = alt.Chart(df, title=title).encode(
        x=alt.X("label:N", sort=list(df["label"]), title=None, axis=alt.Axis(labelAngle=-20, labelLimit=220)),
        y=alt.Y("bits_per_byte:Q", title=y_title, scale=alt.Scale(domainMin=0)),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("bits_per_byte:Q", format=".3f"),
                 alt.Tooltip("ppl:Q", format=".2f"), alt.Tooltip("ppl_per_word:Q", format=".1f")],
    )
    bars = base.mark_bar().encode(color=alt.Color("kind_label:N", title=None, legend=alt.Legend(orient="bottom")))
    text = base.mark_text(dy=-6).encode(text=alt.Text("bits_per_byte:Q", format=".2f"))
    return localized((bars + text).properties(height=320), lang)


def scale_frame(results: list[dict]) -> pd.DataFrame:
    """Course decoders only (one tokenizer, so per-token perplexity compares): size and perplexity."""
    rows = [{"model": r["model"], "non_embedding": r["non_embedding"], "ppl": r["ppl"],
             "unigram_ppl": math.exp(r["unigram_nll"] / r["tokens"])}
            for r in results if "unigram_nll" in r and not r.get("pseudo")]
    return pd.DataFrame(rows, columns=["model", "non_embedding", "ppl", "unigram_ppl"]).sort_values("non_embedding")


def scale_chart(df: pd.DataFrame, title: str, x_title: str, y_title: str, unigram_label: str,
                lang: str = "en") -> alt.Chart:
    """Perplexity against non-embedding parameters (log axis), with the unigram baseline as a rule."""
    line = alt.Chart(df, title=title).mark_line(point=alt.OverlayMarkDef(size=80)).encode(
        x=alt.X("non_embedding:Q", scale=alt.Scale(type="log"), title=x_title),
        y=alt.Y("ppl:Q", scale=alt.Scale(type="log"), title=y_title),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("non_embedding:Q", format=","),
                 alt.Tooltip("ppl:Q", format=".2f")],
    )
    labels = line.mark_text(align="left", dx=8, dy=-8).encode(text="model:N")
    baseline = pd.DataFrame({"unigram_ppl": [float(df["unigram_ppl"].mean())] if len(df) else [],
                             "label": [unigram_label] if len(df) else []})
    rule = alt.Chart(baseline).mark_rule(strokeDash=[6, 4], color="#888").encode(y="unigram_ppl:Q")
    rule_text = alt.Chart(baseline).mark_text(align="left", dy=-6, color="#666", x=5).encode(
        y="unigram_ppl:Q", text="label:N")
    return localized((line + labels + rule + rule_text).properties(height=320), lang)


def _colour(bits: float) -> str:
    """White (no surprise) to red (SURPRISE_MAX_BITS or more)."""
    a = min(max(bits, 0.0) / SURPRISE_MAX_BITS, 1.0)
    return f"rgba(220, 38, 38, {a:.2f})"


def surprisal_html(text: str, records: list[dict], lang: str, unit: str = "bits") -> str:
    """The text with each scored token's characters shaded by its surprisal; all text escaped."""
    parts, at = [], 0
    for r in sorted(records, key=lambda r: r["start"]):
        if r["start"] < at or r["end"] <= r["start"]:
            continue
        parts.append(html.escape(text[at:r["start"]]))
        tip = html.escape(f"{r['token']!r}: {number(r['bits'], lang)} {unit}", quote=True)
        parts.append(f'<span title="{tip}" style="background:{_colour(r["bits"])};border-radius:3px">'
                     f'{html.escape(text[r["start"]:r["end"]])}</span>')
        at = r["end"]
    parts.append(html.escape(text[at:]))
    return f'<div class="surprisal" style="line-height:1.9;white-space:pre-wrap">{"".join(parts)}</div>'


def words_compare(text: str, a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    """Per whitespace word: bits under model a and b (characters summed), and a - b."""
    rows, i = [], 0
    for word in text.split():
        start = text.index(word, i)
        end = i = start + len(word)
        ba, bb = a[start:end], b[start:end]
        if np.isnan(ba).all() or np.isnan(bb).all():
            continue
        sa, sb = float(np.nansum(ba)), float(np.nansum(bb))
        rows.append({"word": word, "start": start, "a": sa, "b": sb, "diff": sa - sb})
    return pd.DataFrame(rows, columns=["word", "start", "a", "b", "diff"])


def compare_html(text: str, words: pd.DataFrame, lang: str, names: tuple[str, str]) -> str:
    """The text with each word shaded by where model a was more (red) or less (green) surprised than b."""
    parts, at = [], 0
    for w in words.itertuples():
        parts.append(html.escape(text[at:w.start]))
        a = min(abs(w.diff) / 8.0, 1.0)
        colour = f"rgba(220, 38, 38, {a:.2f})" if w.diff > 0 else f"rgba(22, 163, 74, {a:.2f})"
        tip = html.escape(f"{names[0]}: {number(w.a, lang)} · {names[1]}: {number(w.b, lang)} bits", quote=True)
        parts.append(f'<span title="{tip}" style="background:{colour};border-radius:3px">'
                     f"{html.escape(w.word)}</span>")
        at = w.start + len(w.word)
    parts.append(html.escape(text[at:]))
    return f'<div class="surprisal-compare" style="line-height:1.9;white-space:pre-wrap">{"".join(parts)}</div>'
