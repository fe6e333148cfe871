"""Legend labels are never cut (issue 34, item 11): "mostrado como um toke…" (fill's masking grid, Portuguese) and
"without (whole sequenc…" (the code page's key-value cache chart) had Vega-Lite's default 160-pixel label limit."""

from viz import code as viz_code
from viz import fill as viz_fill


def test_the_masking_grid_and_the_cache_chart_never_cut_a_legend_label():
    words = {None: "não perguntado", "mask": "mostrado como <mask>", "random": "mostrado como um token aleatório",
             "kept": "mostrado sem mudança"}
    grid = viz_fill.masking_grid(["O", " pacote"], [["mask", None]], words, "t", "época", "pt").to_dict()
    assert grid["encoding"]["color"]["legend"]["labelLimit"] == 0
    rows = [{"tokens": n, "with_cache": 0.01, "without_cache": 0.02 * n} for n in (4, 5, 6)]
    kv = viz_code.kv_chart(rows, "with the cache", "without (whole sequence again)", "t", "x", "y").to_dict()
    assert kv["encoding"]["color"]["legend"]["labelLimit"] == 0
