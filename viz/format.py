"""Numbers as the UI language writes them: 1,050,000 and 2.20 in English, 1.050.000 and 2,20 in Portuguese."""

from __future__ import annotations


def number(x, lang: str = "en", decimals: int = 2) -> str:
    """An int with thousands separators, a float with `decimals` decimals, None as —; in `lang`'s style."""
    if x is None:
        return "—"
    text = f"{x:,}" if isinstance(x, int) else f"{x:,.{decimals}f}"
    if lang == "pt":  # swap the separators: 1,050,000.5 -> 1.050.000,5
        text = text.translate(str.maketrans(",.", ".,"))
    return text
