"""The serving page under AppTest, in both languages, on the shipped course-gpt2: nothing runs until asked; a run
measures every mode at each concurrency with real servers (lab serve on loopback) and draws what lab.serving.loadtest
returned; a URL that is not loopback is refused with a message; the hosted demo starts no server."""

from functools import partial

import pytest

from tests import pages
from tests.test_tokens_page import chart_data

PAGE = "app_pages/serving.py"
open_page = partial(pages.open_page, PAGE, timeout=300)
SMALL = {"serve_conc": "1,2", "serve_requests": "2", "serve_tokens": "4", "serve_repeats": "2"}
MODES = ("function call (no HTTP)", "HTTP, no batching", "HTTP, batching", "HTTP, continuous batching",
         "HTTP, batching, no key-value cache")


def table(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_a_run_measures_every_mode_with_real_servers(fresh_caches):
    at = open_page(**SMALL)
    assert at.title[0].value == "Serving the model over HTTP"
    assert not any("mode" in d.value.columns for d in at.dataframe)  # nothing measured before the click
    at.button[0].click().run()
    assert not at.exception and not at.error
    shown = table(at, "mode")
    assert list(shown["mode"]) == [m for m in MODES for _ in (1, 2)]
    assert list(shown["concurrency"]) == [1, 2] * 5 and set(shown["errors"]) == {0}
    rows = at.session_state["serve_results"]["rows"]
    assert all(r["tokens"] == 4 + 1 and r["repeats"] == 2 for r in rows)  # mixed lengths 4, 1: each wrote all
    assert all(r["tokens_per_s_lo"] <= r["tokens_per_s"] <= r["tokens_per_s_hi"] for r in rows)
    assert len(at.get("vega_lite_chart")) == 3
    for chart, measure, scale in zip(at.get("vega_lite_chart"), ("ttft_p50", "tbt_mean", "tokens_per_s"),
                                     (1000, 1000, 1), strict=True):  # each line is lab's number, times in ms
        data = chart_data(chart)
        assert list(data["measure"]) == [measure] * len(rows)
        assert list(data["value"]) == pytest.approx([scale * r[measure] for r in rows])
    assert not at.get("progress")  # the bar goes away when the run ends
    assert set(table(at, "TTFT p99")["goodput"]) and any("inter-token latency" in m.value for m in at.markdown)
    assert "authentication" in set(table(at, "layer")["layer"])


def test_portuguese(fresh_caches):
    at = open_page(lang="pt", **SMALL)
    assert at.title[0].value == "Servir o modelo por HTTP"
    at.button[0].click().run()
    assert not at.exception
    assert "HTTP, com lotes" in set(table(at, "modo")["modo"])
    assert "autenticação" in set(table(at, "camada")["camada"])


def test_a_remote_url_is_refused(fresh_caches):
    at = open_page(serve_source="url", state={"serve_url": "http://203.0.113.9:8000"}, **SMALL)
    at.button[0].click().run()
    assert any("not a loopback address" in e.value for e in at.error)
    assert not any("mode" in d.value.columns for d in at.dataframe)


def test_the_hosted_demo_starts_no_server(fresh_caches, monkeypatch):
    monkeypatch.setenv("LAB_HOSTED", "1")
    at = open_page()
    assert any("starts no server" in i.value for i in at.info)
    assert not at.button or all("load test" not in b.label for b in at.button)
    assert "python -m lab serve" in at.code[0].value
