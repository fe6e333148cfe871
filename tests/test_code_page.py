"""The code page under AppTest, in both languages, on the shipped course-gpt2: the step's line is marked in the
source, the tensor shown is the one transformers computes (attention weights against output_attentions),
layer and head change what is shown, the KV table grows, and bad input."""

import html
import re
from functools import partial

import numpy as np
import pytest
import torch

from lab.models import load
from tests import pages
from tests.test_tokens_page import chart_data

PAGE = "app_pages/code.py"
open_page = partial(pages.open_page, PAGE, timeout=180)
TEXT = "The package manager installs the package and its dependencies."


def source_html(at) -> str:
    (body,) = [h.proto.body for h in at.get("html") if 'class="lab-code"' in h.proto.body]
    return body


def plain(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", fragment.split("</style>")[-1]))


def marked_line(at) -> str:
    """The source line the page marks, as text."""
    (line,) = re.findall(r'<span class="lab-step" style="background-color: #fffadc; outline: 2px solid #8a6d00">'
                         r'(.*?)\n', source_html(at))
    return plain(line)


def heatmap_values(at) -> np.ndarray:
    """The query x key heatmap's values as a matrix (masked cells NaN)."""
    (chart,) = [c for c in at.get("vega_lite_chart") if '"field": "query"' in c.proto.spec]
    frame = chart_data(chart)
    n = int(frame["query"].max()) + 1
    out = np.full((n, n), np.nan)
    out[frame["query"], frame["key"]] = frame["value"]
    return out


def hf_attention(layer: int, head: int) -> np.ndarray:
    m = load("course-gpt2")
    with torch.no_grad():
        out = m.model(input_ids=torch.tensor([m.tokenizer(TEXT)["input_ids"]]), output_attentions=True)
    return out.attentions[layer][0, head].numpy()


def test_english_page_marks_the_line_and_shows_transformers_attention(fresh_caches):
    at = open_page()
    assert at.title[0].value == "GPT-2's code beside its tensors"
    assert plain(source_html(at)).lstrip().startswith("69def attn(")  # the function, numbered as in the file
    assert 'rec("attn.weights", torch.softmax(w, dim=-1))' in marked_line(at)
    (caption,) = [c.value for c in at.caption if c.value.startswith("lab/gpt2.py, line")]
    line = int(caption.split()[-1])
    source = open("lab/gpt2.py", encoding="utf-8").read().splitlines()
    assert 'rec("attn.weights"' in source[line - 1]
    assert "8 heads × 12 queries × 12 keys" in " ".join(m.value for m in at.markdown)
    assert np.nanmax(np.abs(heatmap_values(at) - hf_attention(0, 0))) < 1e-5
    kv = next(d.value for d in at.dataframe if "ms with cache" in d.value.columns)
    assert list(kv["present"])[:2] == ["4 × 2 × 8 × 12 × 32", "4 × 2 × 8 × 13 × 32"] and len(kv) == 13
    mapping = next(d.value for d in at.dataframe if "original (model.py)" in d.value.columns)
    assert "conv1d" in set(mapping["original (model.py)"]) and len(mapping) == 16


def test_layer_and_head_change_what_is_shown(fresh_caches):
    at = open_page(code_layer="3", code_head="5")
    assert np.nanmax(np.abs(heatmap_values(at) - hf_attention(3, 5))) < 1e-5
    assert np.nanmax(np.abs(heatmap_values(at) - hf_attention(0, 0))) > 1e-2


def test_choosing_a_step_moves_the_marked_line(fresh_caches):
    at = open_page(code_step="mlp.c_fc")
    assert 'rec("mlp.c_fc"' in marked_line(at)
    assert "12 tokens × 1,024 numbers" in " ".join(m.value for m in at.markdown)
    at.select_slider(key="code_step").set_value("logits").run()
    assert not at.exception
    assert "12 tokens × 8,192 scores, one per vocabulary entry" in " ".join(m.value for m in at.markdown)
    assert 'rec("logits"' in marked_line(at)


def test_portuguese_words_and_numbers(fresh_caches):
    at = open_page(lang="pt", code_step="mlp.c_fc")
    assert at.title[0].value == "O código do GPT-2 ao lado dos tensores"
    shown = " ".join(m.value for m in at.markdown)
    assert "tokens × 1.024 números" in shown
    assert any(c.value.startswith("lab/gpt2.py, linha") for c in at.caption)
    assert any("original (model.py)" in d.value.columns and "linhas lá" in d.value.columns for d in at.dataframe)


def test_an_encoder_in_the_sidebar_falls_back_to_the_course_gpt2(fresh_caches):
    at = open_page(model="course-roberta")
    assert any("course-roberta is an encoder" in i.value and "course-gpt2" in i.value for i in at.info)
    assert source_html(at)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_an_empty_text_says_so(fresh_caches, text):
    at = open_page(state={"code_text": text})
    assert at.info[-1].value == "Type a text to run the code on."


def test_a_long_text_is_cut_to_the_pages_tokens_with_a_note(fresh_caches):
    at = open_page(state={"code_text": "word " * 300})
    n = len(load("course-gpt2").tokenizer("word " * 300)["input_ids"])
    assert any(f"first 64 tokens ({n - 64} left out)" in c.value for c in at.caption)
    kv = next(d.value for d in at.dataframe if "ms with cache" in d.value.columns)
    assert kv["present"].iloc[0] == "4 × 2 × 8 × 64 × 32"


def test_a_new_rec_in_lab_gpt2_appears_on_the_page(fresh_caches, tmp_path, monkeypatch):
    """lab/gpt2.py with one more recorded step (a copy after the GELU): the page's step slider offers it, marks its
    line and reads its shape from its comment, with no other file changed."""
    import importlib.util

    from lab import trace
    from ui.cached import code as cached

    source = open("lab/gpt2.py", encoding="utf-8").read()
    gelu = '    h = rec("mlp.gelu", gelu(h))  # [T, 4C]\n'
    assert gelu in source
    path = tmp_path / "gpt2_plus.py"
    path.write_text(source.replace(gelu, gelu + '    h = rec("mlp.copy", h.clone())  # [T, 4C]\n'), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("gpt2_plus", path)
    plus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plus)
    monkeypatch.setattr(trace, "gpt2", plus)
    monkeypatch.setattr(cached, "gpt2", plus)
    at = open_page(code_step="mlp.copy")
    assert not at.exception
    options = at.select_slider(key="code_step").options
    assert options.index("mlp.copy") == options.index("mlp.gelu") + 1
    assert 'rec("mlp.copy"' in marked_line(at)
    assert "12 tokens × 1,024 numbers" in " ".join(m.value for m in at.markdown)
