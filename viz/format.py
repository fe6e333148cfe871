"""Numbers as the UI language writes them: 1,050,000 and 2.20 in English, 1.050.000 and 2,20 in Portuguese.

Python formats what the app writes itself (tables, metrics, chart labels made as text); `localized`
gives a chart Vega's number locale, so the numbers Vega writes (axis ticks, legends, tooltips, text
marks with a format) follow the same rule. Every chart builder in viz/ ends with it.
"""

from __future__ import annotations

import math

from lab.models.registry import human_bytes

_SWAP = str.maketrans(",.", ".,")
# d3-format locales (what Vega's config.locale.number takes). Brazilian Portuguese: d3's own pt-BR.
NUMBER_LOCALES = {"en": {"decimal": ".", "thousands": ",", "grouping": [3], "currency": ["$", ""]},
                  "pt": {"decimal": ",", "thousands": ".", "grouping": [3], "currency": ["R$", ""]}}


def written(text: str, lang: str = "en") -> str:
    """A number already formatted the English way (f"{x:,.2f}", "0.07"), as `lang` writes it."""
    return text.translate(_SWAP) if lang == "pt" else text


def number(x, lang: str = "en", decimals: int = 2) -> str:
    """An int with thousands separators, a float with `decimals` decimals, None as —, infinity as ∞; in `lang`'s
    style."""
    if x is None:
        return "—"
    if not isinstance(x, int) and math.isinf(x):  # e.g. the per-word perplexity of a 5,000-letter "word"
        return "∞" if x > 0 else "−∞"
    if not isinstance(x, int) and round(float(x), decimals) == 0:
        x = 0.0  # no "-0.00" (numpy's float32 too): a value that rounds to zero is written without a sign (issue 48)
    return written(f"{x:,}" if isinstance(x, int) else f"{x:,.{decimals}f}", lang)


SIGNED_MOST = 6  # the most decimals a small difference is written with before it turns to 1e-07 notation


def signed(x: float, lang: str = "en", decimals: int = 2) -> str:
    """A difference with its sign, in `lang`'s style: +0.25 / -0,25, an exact zero as 0.00 with no sign. A difference
    that is not zero never reads as one: where `decimals` would round it to 0.000 it gets the decimals its first
    digit needs (-0.0004; past SIGNED_MOST decimals -4e-07), so its sign and its size both stay true."""
    x = float(x)
    if x == 0 or math.isnan(x):
        return number(0.0 if x == 0 else x, lang, decimals)
    if round(x, decimals) != 0:
        return ("+" if x > 0 else "") + number(x, lang, decimals)
    needed = -math.floor(math.log10(abs(x)))  # 0.0004 -> 4: its first digit's place
    if needed > SIGNED_MOST:
        return written(f"{x:+.0e}", lang)
    return written(f"{x:+,.{max(needed, decimals)}f}", lang)


def size(n: int, lang: str = "en") -> str:
    """A size in bytes as the registry writes it ('1.52 GB'), in `lang`'s style ('1,52 GB')."""
    return written(human_bytes(n), lang)


def localized(chart, lang: str = "en"):
    """The chart with `lang`'s number locale (config.locale), so Vega writes 2,20 and 1.024 in Portuguese, and a
    text alternative in `lang` (viz.access.described: what a screen reader says for it)."""
    from viz.access import described  # viz.access reads viz.present, which is free of this module

    chart = described(chart, lang)
    if lang not in NUMBER_LOCALES or lang == "en":
        return chart  # Vega's default is English already: English specs stay as they were
    return chart.configure(locale={"number": NUMBER_LOCALES[lang]})


MARKDOWN_ACTIVE = "\\`*_[]<>#!|~$"  # what Streamlit's Markdown would act on inside a sentence


def markdown_literal(text: str) -> str:
    """Text quoted inside Markdown (a caption, a notice) as it is: every character Markdown acts on escaped,
    newlines as spaces, so a reader's or a model's text can never become a link, an image or a heading."""
    out = "".join("\\" + c if c in MARKDOWN_ACTIVE else c for c in text)
    return " ".join(out.splitlines())
