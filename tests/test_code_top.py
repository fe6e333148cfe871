"""The code page's "next token, top 5" bars after a text change (issue 34, item 4): rank 2 was drawn above rank 1
(logits 9.346 vs 9.867) until a fresh load, because the bars kept their data order. The chart now sorts by value
itself; its data are transformers' own top 5 for the new text."""

import json

import torch

from lab.models import load, registry
from tests import pages


def top_chart(at):
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if spec.get("encoding", {}).get("x", {}).get("field") == "logit":
            return spec
    raise AssertionError("no top-5 chart")


def test_the_top_5_is_sorted_by_value_after_a_text_change(fresh_caches):
    from transformers import AutoModelForCausalLM

    at = pages.open_page("app_pages/code.py", timeout=180)
    text = "Debian is a free operating system, and its package manager"
    at.text_area(key="code_text").input(text).run()
    assert not at.exception
    spec = top_chart(at)
    assert spec["encoding"]["y"]["sort"] == "-x"  # the largest logit on top, whatever the data's order
    model = AutoModelForCausalLM.from_pretrained(registry.info("course-gpt2").path, dtype=torch.float32)
    ids = load("course-gpt2").tokenizer(text)["input_ids"]
    with torch.no_grad():
        want = model(torch.tensor([ids])).logits[0, -1].topk(5).values.tolist()
    import pyarrow as pa

    chart = next(c for c in at.get("vega_lite_chart") if json.loads(c.proto.spec) == spec)
    got = [v for ds in chart.proto.datasets for v in pa.ipc.open_stream(ds.data.data).read_all().column(
        "logit").to_pylist()]
    assert sorted(got, reverse=True) == sorted(got, reverse=True)[:5] and len(got) == 5
    assert max(abs(a - b) for a, b in zip(sorted(got, reverse=True), want, strict=True)) < 1e-3
