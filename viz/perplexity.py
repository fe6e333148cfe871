"""Views for the perplexity page: the comparison table and chart, the offline scale curve, surprisal as text."""

from __future__ import annotations

import html
import math

import altair as alt
import numpy as np
import pandas as pd

from viz.format import localized, number

LABEL_LIMIT = 600  # pixels: wider than any model's label in either language
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
    """Bits per byte per model, ordered by size, as horizontal bars: the models' labels read level and whole
    (never cut: no label limit below LABEL_LIMIT pixels), the chart as tall as its bars (no squeezed axis under
    long rotated labels) with its title above them; encoders' pseudo values in another colour. y_title names
    the bits axis (here the horizontal one)."""
    df = frame.assign(kind_label=[legend[k] for k in frame["kind"]])
    base = alt.Chart(df).encode(
        y=alt.Y("label:N", sort=list(df["label"]), title=None, axis=alt.Axis(labelLimit=LABEL_LIMIT, labelPadding=6)),
        x=alt.X("bits_per_byte:Q", title=y_title, scale=alt.Scale(domainMin=0)),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("bits_per_byte:Q", format=".3f"),
                 alt.Tooltip("ppl:Q", format=".2f"), alt.Tooltip("ppl_per_word:Q", format=".1f")],
    )
    bars = base.mark_bar().encode(color=alt.Color("kind_label:N", title=None, legend=alt.Legend(
        orient="bottom", labelLimit=0)))
    text = base.mark_text(align="left", dx=4).encode(text=alt.Text("bits_per_byte:Q", format=".2f"))
    chart = (bars + text).properties(height=alt.Step(34), padding={"top": 8, "left": 5, "right": 5, "bottom": 5},
                                     title=alt.TitleParams(title, anchor="start", offset=12, frame="bounds"))
    return localized(chart, lang)


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


SHADES = 20  # the views' shades: one CSS class per step of 1/20 (a class per chip instead of an inline style)


def _shade(x: float) -> int:
    """0 .. SHADES for x in [0, 1]."""
    return round(min(max(x, 0.0), 1.0) * SHADES)


INK = "#111111"  # the chips' text: near black on every shade
# The fullest shade of each hue, as an opacity over the white page: capped so that INK keeps at least 4.5:1 (WCAG AA)
# on the darkest chip, the one a teacher points at (issue 48: at full red the theme's text had 4.0:1). Red at 0.8
# gives 5.0:1, green at 1.0 5.7:1 (tests/test_colour.py computes them from this stylesheet).
RED, GREEN = ((220, 38, 38), 0.8), ((22, 163, 74), 1.0)


def view_css() -> str:
    """The two views' stylesheet (st.html it once per page): their shades as classes, so that each of the
    thousands of chips carries a short class rather than an inline style (less HTML to send, sanitise and style).
    s<k>: surprisal, red at k / SHADES of its fullest shade; g<k> / r<k>: the comparison, green or red."""
    rules = [f".surprisal span, .surprisal-compare span {{border-radius:3px;color:{INK}}}",
             ".ppl-joined {text-decoration:underline dotted}"]
    for k in range(SHADES + 1):
        (r, g, b), top = RED
        red = f"{{background:rgba({r}, {g}, {b}, {top * k / SHADES:.2f})}}"
        (r, g, b), top = GREEN
        rules += [f".surprisal .s{k} {red}", f".surprisal-compare .r{k} {red}",
                  f".surprisal-compare .g{k} {{background:rgba({r}, {g}, {b}, {top * k / SHADES:.2f})}}"]
    return "<style>" + "\n".join(rules) + "</style>"


def surprisal_chips(records: list[dict], runs: list[dict] | None = None) -> list[dict]:
    """The surprisal view's chips, in text order: {start, end, bits, token, tokens} per scored token, or per run of
    lab.text.readable when runs are given, so that tokens which together make one character (they share its
    character offsets) are one chip whose bits are the sum of its pieces' (tokens: how many were scored)."""
    by_position = {r["position"]: r for r in records}
    groups = ([[by_position[p] for p in range(run["start"], run["stop"]) if p in by_position] for run in runs]
              if runs is not None else [[r] for r in records])
    chips = [{"start": min(r["start"] for r in g), "end": max(r["end"] for r in g), "bits": sum(r["bits"] for r in g),
              "token": "".join(r["token"] for r in g), "tokens": len(g)} for g in groups if g]
    return sorted(chips, key=lambda c: c["start"])


def surprisal_html(text: str, records: list[dict], lang: str, unit: str = "bits", runs: list[dict] | None = None,
                   joined: str = "{n} tokens, summed") -> str:
    """The text with each scored token's characters shaded by its surprisal (view_css's classes); all text escaped.
    With runs
    (lab.text.readable over the evaluated ids), a character split across tokens is one chip (class ppl-joined,
    dotted underline) shaded by its pieces' summed bits, `joined` ({n}: how many) in its title."""
    parts, at = [], 0
    for c in surprisal_chips(records, runs):
        if c["start"] < at or c["end"] <= c["start"]:
            continue
        parts.append(html.escape(text[at:c["start"]]))
        shown = repr(text[c["start"]:c["end"]]) if c["tokens"] > 1 else repr(c["token"])
        tip = f"{shown}: {number(c['bits'], lang)} {unit}" + (f" ({joined.format(n=c['tokens'])})" if c["tokens"] > 1
                                                             else "")
        cls = f"s{_shade(c['bits'] / SURPRISE_MAX_BITS)}" + (" ppl-joined" if c["tokens"] > 1 else "")
        parts.append(f'<span class="{cls}" title="{html.escape(tip, quote=True)}">'
                     f'{html.escape(text[c["start"]:c["end"]])}</span>')
        at = c["end"]
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
    """The text with each word shaded by where model a was more (red) or less (green) surprised than b (view_css's
    classes)."""
    parts, at = [], 0
    for w in words.itertuples():
        parts.append(html.escape(text[at:w.start]))
        cls = f"{'r' if w.diff > 0 else 'g'}{_shade(abs(w.diff) / 8.0)}"
        tip = html.escape(f"{names[0]}: {number(w.a, lang)} · {names[1]}: {number(w.b, lang)} bits", quote=True)
        parts.append(f'<span class="{cls}" title="{tip}">{html.escape(w.word)}</span>')
        at = w.start + len(w.word)
    parts.append(html.escape(text[at:]))
    return f'<div class="surprisal-compare" style="line-height:1.9;white-space:pre-wrap">{"".join(parts)}</div>'
