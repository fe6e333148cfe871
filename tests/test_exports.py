"""Exports and presentation mode (issue 11): charts as SVG and PNG, tables as CSV, a projector view.

The files are checked as files (parsed SVG, decoded PNG, CSV read back by pandas), from the same
chart builders the pages use; the page tests check that every chart and table gets its buttons.
"""

import io
import json
import xml.etree.ElementTree as ET
from functools import partial

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.pages import open_page
from ui import a11y
from viz import attention as viz_attention
from viz import tokens as viz_tokens
from viz.export import PNG_SCALE, chart_png, chart_spec, chart_svg, csv_bytes

SVG = "{http://www.w3.org/2000/svg}"


def premium_chart():
    """The tokens page's premium chart, with Portuguese text in its labels."""
    frame = viz_tokens.premium_frame({"seu texto": {"gpt2": 1.8, "cl100k_base": 1.4, "o200k_base": 1.2},
                                      "conjunto de exemplos": {"gpt2": 1.79, "cl100k_base": 1.46, "o200k_base": 1.16}})
    return viz_tokens.premium_chart(frame, y_title="tokens em português ÷ tokens em inglês", lang="pt")


def test_svg_is_a_drawing_of_the_chart_with_its_words():
    svg = chart_svg(premium_chart())
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and float(root.get("width")) > 100
    texts = {"".join(e.itertext()) for e in root.iter(f"{SVG}text")}
    assert "tokens em português ÷ tokens em inglês" in texts  # the axis title, accents intact
    assert {"gpt2", "cl100k_base", "o200k_base"} <= texts


def test_png_is_twice_the_on_screen_size():
    chart = premium_chart()
    root = ET.fromstring(chart_svg(chart))
    image = Image.open(io.BytesIO(chart_png(chart)))
    assert image.format == "PNG"
    assert image.size == (round(float(root.get("width")) * PNG_SCALE), round(float(root.get("height")) * PNG_SCALE))


def test_a_chart_over_altairs_row_limit_exports_whole():
    """A 100 x 60 heatmap is 6,000 rows: Altair's to_dict refuses it, the page shows it, the export keeps all."""
    values = np.tril(np.random.default_rng(0).random((100, 60)))
    chart = viz_attention.heatmap(values, [f"t{i}" for i in range(100)], title="big")
    spec = chart_spec(chart)
    rows = sum(len(v) for v in spec["datasets"].values())
    assert rows == 6000
    assert ET.fromstring(chart_svg(chart)).tag == f"{SVG}svg"


def test_csv_reads_back_with_accents_in_a_spreadsheet_encoding():
    frame = pd.DataFrame({"palavra": ["coração", "ação", "não"], "tokens": [3, 2, 2]})
    data = csv_bytes(frame)
    assert data.startswith(b"\xef\xbb\xbf")  # the BOM spreadsheet programs need to read UTF-8
    pd.testing.assert_frame_equal(pd.read_csv(io.BytesIO(data), encoding="utf-8-sig"), frame)


open_tokens = partial(open_page, "app_pages/tokens.py", timeout=30)  # no model needed


def downloads(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


def test_tokens_page_offers_every_chart_and_table_as_files():
    at = open_tokens()
    # premium chart: SVG + PNG; tables: Portuguese costs, English costs, costliest words
    assert sorted(downloads(at)) == ["CSV", "CSV", "CSV", "PNG", "SVG"]


def test_presentation_mode_hides_explanations_and_enlarges_charts():
    intro = "The same sentence costs more tokens in Portuguese"
    normal, present = open_tokens(), open_tokens(present="1")
    assert any(intro in m.value for m in normal.markdown)
    assert not any(intro in m.value for m in present.markdown)
    assert present.toggle(key="present").value is True and normal.toggle(key="present").value is False

    def fonts(at):
        (chart,) = at.get("vega_lite_chart")
        return json.loads(chart.proto.spec).get("config", {}).get("axis", {}).get("labelFontSize")

    assert fonts(normal) is None and fonts(present) == 15
    styles = [h.proto.body for h in present.get("html") if "<style>" in h.proto.body
              and not h.proto.body.startswith(a11y.CODE_CSS)]
    assert len(styles) == 1 and "font-size: 1.3rem" in styles[0]


def test_presentation_toggle_writes_the_link():
    at = open_tokens()
    at.toggle(key="present").set_value(True).run()
    assert at.query_params["present"] == ["1"] or at.query_params["present"] == "1"
    at.toggle(key="present").set_value(False).run()
    assert "present" not in at.query_params


@pytest.mark.parametrize("value", ["0", "no", "<script>", ""])  # "yes" is on: the codec's boolean rule (issue 58)
def test_presentation_link_garbage_means_off(value):
    at = open_tokens(present=value)
    assert at.toggle(key="present").value is False
