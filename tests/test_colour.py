"""Colour that every reader can tell apart (issue 42, docs/accessibility.md), against colorspacious' simulation of
colour-vision deficiency (Machado et al. 2009, at full severity): each palette in viz/ whose colours carry a meaning
keeps every pair at least MIN_DELTA_E apart in CAM02-UCS for normal vision, deuteranopia and protanopia; heatmaps use
only reviewed colour-blind-safe schemes; lines that must be told apart differ in dash and marker too; the ceiling
page's wrong tokens carry a mark besides their colour."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from colorspacious import cspace_convert, deltaE

from viz import ceiling, code, detect, embeddings, fill, sampling, serving

MIN_DELTA_E = 12  # CAM02-UCS; 1 is a just-noticeable step, categorical palettes usually aim at 10 or more
VISION = {"normal": None, "deuteranopia": "deuteranomaly", "protanopia": "protanomaly"}
PALETTES = {"ceiling right/wrong": (ceiling.RIGHT, ceiling.WRONG),
            "detector GLTR buckets": detect.COLOURS,
            "analogies roles": tuple(embeddings.ROLE_COLOURS.values()),
            "analogies arrows": tuple(embeddings.PAIR_COLOURS.values()),
            "fill masking actions": tuple(fill.ACTION_COLOURS.values()),
            "sampling marks": sampling.MARK_COLOURS}
# Vega schemes a heatmap here may use, each reviewed as colour-blind safe: one hue, viridis, or diverging through
# blue (never red against green, like redyellowgreen or spectral)
SAFE_SCHEMES = {"blues", "viridis", "purpleorange", "redblue"}
VIZ = Path(__file__).resolve().parents[1] / "viz"


def seen(hex_colour: str, vision: str) -> np.ndarray:
    """The colour as sRGB in [0, 1], as a reader with `vision` sees it."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    if VISION[vision] is None:
        return rgb
    cvd = {"name": "sRGB1+CVD", "cvd_type": VISION[vision], "severity": 100}
    return np.clip(cspace_convert(rgb, cvd, "sRGB1"), 0, 1)


def closest_pair(colours, vision: str) -> tuple[float, str, str]:
    return min((float(deltaE(seen(a, vision), seen(b, vision), input_space="sRGB1")), a, b)
               for a, b in itertools.combinations(colours, 2))


def test_the_simulation_is_live():
    """The oracle can fail: GLTR's original green and red merge under deuteranopia, and so do violet and blue."""
    assert closest_pair(("#9be28f", "#f59a8c"), "deuteranopia")[0] < MIN_DELTA_E
    assert closest_pair(("#7c3aed", "#2563eb"), "deuteranopia")[0] < MIN_DELTA_E
    assert closest_pair(("#9be28f", "#f59a8c"), "normal")[0] > 30


@pytest.mark.parametrize("vision", list(VISION))
@pytest.mark.parametrize("name", list(PALETTES))
def test_palettes_stay_apart_under_colour_blindness(name, vision):
    distance, a, b = closest_pair(PALETTES[name], vision)
    print(f"{name}, {vision}: closest pair {a} {b} at {distance:.1f}")  # the figures, for the record
    assert distance >= MIN_DELTA_E, (name, vision, a, b, round(distance, 1))


def test_heatmaps_use_only_colour_blind_safe_schemes():
    used = {m for p in VIZ.glob("*.py") for m in re.findall(r'scheme\s*=\s*"([a-z]+)"', p.read_text())}
    assert used and used <= SAFE_SCHEMES, used - SAFE_SCHEMES


def _layers(spec: dict) -> list[dict]:
    return [spec] if "mark" in spec else [x for layer in spec.get("layer", []) for x in _layers(layer)]


def _colour_lines(spec: dict) -> list[dict]:
    """The line marks of a chart spec that tell series apart by a colour field."""
    return [u for u in _layers(spec) if (u["mark"] if isinstance(u["mark"], str) else u["mark"]["type"]) == "line"
            and "field" in u.get("encoding", {}).get("color", {})]


def line_charts():
    """Every chart in viz/ that draws two or more lines told apart by colour, on small data."""
    runs = pd.DataFrame({"mode": ["static"] * 2 + ["continuous"] * 2, "measure": "tps", "concurrency": [1, 2, 1, 2],
                         "value": [1.0, 2.0, 1.5, 3.0]})
    probs = pd.DataFrame({"position": [0, 1, 0, 1], "p": [0.1, 0.2, 0.3, 0.4], "token": ["a", "b", "a", "b"],
                          "model": ["encoder", "encoder", "decoder", "decoder"]})
    rows = [{"tokens": n, "with_cache": 0.01 * n, "without_cache": 0.02 * n} for n in range(1, 5)]
    return {"serving": serving.chart(runs, "tps", "t", "y", "x"),
            "fill both models": fill.compare_chart(probs, ["a", "b"], [1], "t", "p"),
            "code key-value cache": code.kv_chart(rows, "with", "without", "t", "x", "y")}


@pytest.mark.parametrize("name", ["serving", "fill both models", "code key-value cache"])
def test_lines_told_apart_by_colour_differ_in_dash_and_marker_too(name):
    spec = line_charts()[name].to_dict()
    lines = _colour_lines(spec)
    assert lines, f"{name}: no line told apart by colour (the test's chart list is stale)"
    for unit in lines:
        enc = unit["encoding"]
        assert enc.get("strokeDash", {}).get("field") == enc["color"]["field"], (name, "dash")
        assert enc.get("shape", {}).get("field") == enc["color"]["field"], (name, "marker")


def test_a_wrong_token_is_marked_besides_its_colour():
    runs = [{"start": i, "stop": i + 1, "text": w} for i, w in enumerate(["a", "b", "c", "d"])]
    out = ceiling.forced_html(runs, 0, [True, False, True], None,
                              {"original": "o", "forced": "f", "right": "right", "wrong": "wrong"})
    wrong = re.findall(r'<span class="ceil-tok" style="([^"]*)" title="wrong">', out)
    right = re.findall(r'<span class="ceil-tok" style="([^"]*)" title="right">', out)
    assert wrong and right
    assert all("underline wavy" in s for s in wrong) and not any("underline" in s for s in right)


def _luminance(rgb) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (0-255 channels)."""
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b) -> float:
    lo, hi = sorted([_luminance(a), _luminance(b)])
    return (hi + 0.05) / (lo + 0.05)


def _rgb(text: str, page=(255, 255, 255)) -> tuple:
    """#rrggbb, or rgba(r, g, b, a) composited over the white page."""
    if text.startswith("#"):
        return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))
    r, g, b, a = (float(x) for x in re.findall(r"[\d.]+", text))
    return tuple(p - a * (p - c) for p, c in zip(page, (r, g, b), strict=True))


def _shades(css: str) -> dict[str, tuple]:
    """{class selector: background} of a stylesheet's rules that set one."""
    return {sel.strip(): _rgb(bg) for sel, bg in re.findall(r"([^{}]+)\{[^}]*background:\s*([^;}]+)", css)}


def test_every_chip_shade_keeps_its_text_readable():
    """Issue 48, finding 8: the text of every shade class of the perplexity, comparison, detector and ceiling chips
    has at least 4.5:1 against the shade it sits on, computed from the stylesheets the pages send."""
    from viz import perplexity

    ink = _rgb(perplexity.INK)
    assert f"color:{perplexity.INK}" in perplexity.view_css()  # the chips' text colour is the stylesheet's own
    shades = _shades(perplexity.view_css().replace("<style>", "")) | _shades(detect.bucket_css().replace("<style>", ""))
    shades |= {f"ceiling {c}": _rgb(c) for c in (ceiling.RIGHT, ceiling.WRONG, "#dddddd", "#d4a8f0")}
    assert len(shades) >= 3 * (perplexity.SHADES + 1) + 4 + 4
    low = {sel: round(contrast(ink, bg), 2) for sel, bg in shades.items() if contrast(ink, bg) < 4.5}
    assert low == {}, low
    assert 'color:#111' in detect.bucket_css() and "color:#111" in ceiling._span("x", ceiling.RIGHT, "")
