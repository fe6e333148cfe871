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


# ------------------------------------------------- every chip's text against what it sits on (issue 58, the chip)
# A chip is text on a background of its own: the views' HTML (st.html / st.markdown) in viz/. Its ink and its
# background are computed as a browser would from the HTML a builder returns: inline styles and the fragment's
# own <style> rules (class and tag selectors, the descendant combinator), the colour inherited from the nearest
# ancestor that sets it, else the theme's text colour (.streamlit/config.toml); a translucent background composited
# over what is below it, down to the white page. WCAG 2.x AA: 4.5:1 for text.
ROOT = Path(__file__).resolve().parents[1]
AA = 4.5
PAGE = (255, 255, 255)  # the light theme's page (config.toml: base = "light")


def theme_ink() -> tuple:
    import tomllib

    theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
    assert theme["base"] == "light"
    return _rgb(theme["textColor"])


def _declarations(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(";"):
        name, _, value = part.partition(":")
        if value.strip():
            out[name.strip().lower()] = value.strip()
    return out


def css_rules(css: str) -> list[tuple[str, dict[str, str]]]:
    """(selector, declarations) of a stylesheet, one per selector of each rule, in order."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return [(sel.strip(), _declarations(body)) for sels, body in re.findall(r"([^{}]+)\{([^}]*)\}", css)
            for sel in sels.split(",") if sel.strip()]


def _compound_matches(compound: str, element: tuple[str, set[str]]) -> bool:
    tag, classes = element
    want_tag = re.match(r"^[a-zA-Z][\w-]*", compound)
    return ((not want_tag or want_tag.group(0).lower() == tag) and set(re.findall(r"\.([\w-]+)", compound)) <= classes
            and compound.strip() != "")


def selector_matches(selector: str, path: list[tuple[str, set[str]]]) -> bool:
    """Whether `selector` (compounds of a tag and classes, joined by spaces) matches the last element of `path`."""
    *ancestors, last = selector.split()
    if not _compound_matches(last, path[-1]):
        return False
    at = len(path) - 1
    for compound in reversed(ancestors):
        at = next((i for i in range(at - 1, -1, -1) if _compound_matches(compound, path[i])), None)
        if at is None:
            return False
    return True


def _colour(value: str) -> tuple | None:
    """(r, g, b, a) of a CSS colour written #rgb, #rrggbb, rgb() or rgba(); None for anything else."""
    value = value.strip().split()[0] if value.strip().startswith("#") else value.strip()
    if re.fullmatch(r"#[0-9a-fA-F]{3}", value):
        return tuple(int(c * 2, 16) for c in value[1:]) + (1.0,)
    if re.fullmatch(r"#[0-9a-fA-F]{6}", value):
        return tuple(int(value[i:i + 2], 16) for i in (1, 3, 5)) + (1.0,)
    found = re.fullmatch(r"rgba?\(([^)]*)\)", value)
    if found:
        parts = [float(x) for x in re.split(r"[,\s/]+", found.group(1).strip())]
        return tuple(parts[:3]) + ((parts[3],) if len(parts) > 3 else (1.0,))
    return None


def _over(colour: tuple, below: tuple) -> tuple:
    *rgb, a = colour
    return tuple(b - a * (b - c) for b, c in zip(below, rgb, strict=True))


class Drawn(__import__("html.parser").parser.HTMLParser):
    """Every piece of text of an HTML fragment: (its element's classes, ink, background), as drawn on the page."""

    VOID = {"br", "img", "hr", "input", "meta", "link", "wbr"}

    def __init__(self, fragment: str, ink: tuple):
        super().__init__(convert_charrefs=True)
        sheets = re.findall(r"<style[^>]*>(.*?)</style>", fragment, flags=re.S)
        self.rules = [r for css in sheets for r in css_rules(css)]
        self.stack = [("", set(), ink, PAGE, "")]  # (tag, classes, ink, background, label)
        self.texts: list[tuple[str, tuple, tuple]] = []
        self.in_style = False
        self.feed(re.sub(r"<style[^>]*>.*?</style>", "", fragment, flags=re.S))

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        path = [(t, c) for t, c, *_ in self.stack[1:]] + [(tag, classes)]
        decl = {}
        for selector, body in self.rules:
            if selector_matches(selector, path):
                decl |= body
        decl |= _declarations(attrs.get("style") or "")
        _, _, ink, below, label = self.stack[-1]
        colour = _colour(decl["color"]) if "color" in decl else None
        ink = _over(colour, below) if colour else ink
        shade = _colour(decl.get("background-color", decl.get("background", "")))
        background = _over(shade, below) if shade else below
        if shade:
            action = f'[data-action={attrs["data-action"]}]' if "data-action" in attrs else ""
            written = decl.get("background-color", decl.get("background"))
            label = ".".join([tag, *sorted(classes)]) + action + f" {written}"
        self.stack.append((tag, classes, ink, background, label))

    def handle_endtag(self, tag):
        if tag not in self.VOID and len(self.stack) > 1:
            self.stack.pop()

    def handle_data(self, data):
        if data.strip():
            _, _, ink, background, label = self.stack[-1]
            self.texts.append((label or "page", ink, background))


def _stylesheet_chips(css: str) -> str:
    """A chip for every rule of a stylesheet that gives a background: an element the rule's selector matches (its
    ancestors as the selector names them), holding text; the stylesheet with them."""
    chips = []
    for selector, body in css_rules(css.replace("<style>", "").replace("</style>", "")):
        if "background" in body or "background-color" in body:
            compounds = selector.split()
            opened = [(re.match(r"^[a-zA-Z][\w-]*", c) or re.match("", c)).group(0) or "span" for c in compounds]
            names = [" ".join(re.findall(r"[.]([\w-]+)", c)) for c in compounds]
            tags = [f'<{t} class="{n}">' for t, n in zip(opened, names, strict=True)]
            chips.append("".join(tags) + "Ab" + "".join(f"</{t}>" for t in reversed(opened)))
    return css + "".join(chips)


def chip_views() -> dict[str, str]:
    """Each chip builder of viz/ ("module.function"), with every kind of chip it draws, as HTML."""
    from viz import perplexity, tokens

    tok = [{"id": 10 + i, "bytes": [65], "text": "ab", "position": i, "splits_char": i == 5} for i in range(6)]
    runs = [{"text": w, "start": i, "stop": i + 1} for i, w in enumerate(["a", "b", "c", "d", "e"])]
    tips = {"original": "o", "forced": "f", "right": "right", "wrong": "wrong"}
    shown = {a: str(a) for a in fill.ACTION_COLOURS}
    return {
        "viz.tokens.token_chips": tokens.token_chips(tok, limit=6, total=9),
        "viz.fill.chips_html": fill.chips_html(["a", "b", "c", "d"], list(fill.ACTION_COLOURS), shown),
        "viz.fill.sentence_html": fill.sentence_html([("a", False), ("b", True)]),
        "viz.ceiling._span": ceiling.forced_html(runs, 0, [True, False, True], None, tips)
        + ceiling.forced_html(runs, 0, [True, False, True], "z", tips),
        "viz.sampling.coloured_tokens": sampling.coloured_tokens(
            [{"token": "x", "p": p} for p in np.linspace(0, 1, 21)], prompt="the prompt", cursor=True),
        "viz.perplexity.view_css": _stylesheet_chips(perplexity.view_css()),
        "viz.detect.bucket_css": _stylesheet_chips(detect.bucket_css()),
    }


def test_the_chip_reader_can_fail():
    """The oracle: white on the fill page's old orange is 2.55:1 (issue 58), an inherited ink and a class rule
    are read, and a translucent shade is composited over the page."""
    drawn = Drawn('<span style="background:#f58518;color:#ffffff">a</span>', (0, 0, 0)).texts
    assert round(contrast(drawn[0][1], drawn[0][2]), 2) == 2.55
    css = "<style>.v .c{background:rgba(0, 0, 0, 0.5)} .v span{color:#fff}</style>"
    (label, ink, background), = Drawn(css + '<div class="v"><span class="c">a</span></div>', (0, 0, 0)).texts
    assert ink == (255, 255, 255) and background == (127.5, 127.5, 127.5) and label.startswith("span.c")
    assert Drawn('<b style="background:#000">x<i>y</i></b>', (9, 9, 9)).texts[1][1:] == ((9, 9, 9), (0, 0, 0))


def test_every_chip_builder_in_viz_is_checked():
    """A function of viz/ that writes a background (a chip) is drawn by chip_views: a new one fails here until
    it is added there, and so checked below."""
    import ast

    writers = set()
    for path in sorted(VIZ.glob("*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and "background" in (ast.get_source_segment(source, node) or ""):
                writers.add(f"viz.{path.stem}.{node.name}")
    assert writers == set(chip_views())


@pytest.mark.parametrize("name", list(chip_views()))
def test_every_chips_text_is_readable_on_it(name):
    """Issue 58: the fill page's "random" chip was white on #f58518 (2.55:1). Every chip kind of every builder,
    every shade of the stylesheets, at least 4.5:1 against the text drawn on it."""
    texts = Drawn(chip_views()[name], theme_ink()).texts
    chips = {label for label, _, _ in texts if label != "page"}
    assert chips, f"{name}: no chip drawn"
    low = sorted({(label, round(contrast(ink, bg), 2)) for label, ink, bg in texts if contrast(ink, bg) < AA})
    assert low == [], low


def test_every_chip_class_the_stylesheets_define_is_drawn_and_checked():
    """Each class a stylesheet gives a background is among the chips checked above (so a new class is too)."""
    from viz import perplexity

    for css in (perplexity.view_css(), detect.bucket_css()):
        shaded = {re.findall(r"[.]([\w-]+)", sel)[-1] for sel, body in css_rules(css.replace("<style>", ""))
                  if "background" in body}
        drawn = {c for label, _, _ in Drawn(_stylesheet_chips(css), theme_ink()).texts
                 for c in label.split()[0].split(".")[1:]}
        assert shaded and shaded <= drawn, shaded - drawn
    assert len({label for label, *_ in Drawn(_stylesheet_chips(perplexity.view_css()), (0, 0, 0)).texts}) == (
        3 * (perplexity.SHADES + 1))
