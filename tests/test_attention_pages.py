"""The attention and causal-mask pages under AppTest, on tiny random models (no network)."""

import json

import pytest

from lab.causal import TROPHY
from tests.pages import open_page
from tests.test_models import fake_hub_cache


def test_attention_page_switching_heads_never_reruns_the_model(course_standins, forwards):
    at = open_page("app_pages/attention.py")
    assert any("32 = 4 heads × 8" in md.value for md in at.markdown)
    passes = forwards["n"]
    assert passes == 1  # one forward pass for the page
    for layer, head in ((1, 0), (1, 3), (0, 2)):
        at.selectbox(key="attn_layer").select(layer).run()
        at.selectbox(key="attn_head").select(head).run()
        at.radio(key="attn_metric").set_value("entropy").run()
        assert not at.exception
    assert forwards["n"] == passes
    assert at.session_state["attn_layer"] == 0 and at.session_state["attn_head"] == 2
    frame = at.dataframe[0].value
    assert len(frame) == 2 * 4 and list(frame.columns) == ["layer", "head", "entropy", "previous", "first", "self"]


def test_attention_page_empty_and_long_text(course_standins, tiny_model_dirs):
    from transformers import AutoTokenizer

    at = open_page("app_pages/attention.py")
    at.text_area(key="attn_text").set_value("   ").run()
    assert not at.exception and len(at.info) >= 1
    text = "it was " * 60
    n = len(AutoTokenizer.from_pretrained(tiny_model_dirs["gpt2"])(text)["input_ids"])
    at.text_area(key="attn_text").set_value(text).run()  # more tokens than the tiny model's 64
    assert not at.exception and n > 64
    assert any(f"first 64 of {n}" in w.value for w in at.warning)
    assert len(at.slider) == 0  # 64 tokens fit one heatmap window: no window slider


def test_attention_page_window_over_a_long_text(course_standins, monkeypatch):
    from viz import attention as viz

    monkeypatch.setattr(viz, "HEATMAP_MAX", 16)
    at = open_page("app_pages/attention.py")
    at.text_area(key="attn_text").set_value("it was " * 20).run()  # 41 tokens
    assert at.slider(key="attn_start").max == 41 - 16
    at.slider(key="attn_start").set_value(10).run()
    assert not at.exception and any("tokens 10–25 of 41" in c.value for c in at.caption)


def test_causal_page_with_and_without_the_mask(course_standins, forwards):
    at = open_page("app_pages/causal_mask.py")
    assert len(at.subheader) == 2  # with the mask, without it
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["decoder, mask on"] == "0.0"
    assert float(metrics["decoder, mask off"]) > 0
    assert float(metrics["encoder (course-roberta)"]) > 0
    passes = forwards["n"]
    assert passes == 5  # mask on, mask off; the trophy pair with each; the encoder
    at.selectbox(key="mask_layer").select(1).run()
    at.selectbox(key="mask_head").select(3).run()
    assert not at.exception and forwards["n"] == passes


def test_causal_page_in_portuguese(course_standins):
    at = open_page("app_pages/causal_mask.py", lang="pt")
    assert at.text_input(key="trophy_word").value == "era"
    assert "pequena" in at.text_input(key="trophy_b").value
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["decoder, com máscara"] == "0,0"  # exactly zero, written the Brazilian way
    at.radio(key="trophy_pair").set_value("en").run()  # the English pair, still in a Portuguese UI
    assert at.text_input(key="trophy_word").value == "it" and not at.exception
    assert {m.label: m.value for m in at.metric}["decoder, com máscara"] == "0,0"


def test_causal_page_portuguese_pair_in_an_english_ui(course_standins):
    at = open_page("app_pages/causal_mask.py")
    at.radio(key="trophy_pair").set_value("pt").run()
    assert at.text_input(key="trophy_a").value == TROPHY["pt"][0] and not at.exception
    assert any("ela" in c.value and "era" in c.value for c in at.caption)
    assert {m.label: m.value for m in at.metric}["decoder, mask on"] == "0.0"


def test_causal_page_bad_trophy_input(course_standins):
    at = open_page("app_pages/causal_mask.py")
    at.text_input(key="trophy_b").set_value("A cup didn't fit in the suitcase because it was too small.").run()
    assert not at.exception and any("cannot be compared" in w.value for w in at.warning)
    assert any("differ before 'it'" in x.value for x in at.text)
    at.text_input(key="trophy_word").set_value("banana").run()
    assert not at.exception and any("not in sentence a" in x.value for x in at.text)
    at.text_input(key="trophy_a").set_value("The **trophy** $x$ :red[fit].").run()  # shown as typed, not as Markdown
    assert any("The **trophy** $x$ :red[fit]." in x.value for x in at.text)
    assert not any("**" in w.value for w in at.warning)
    at.text_input(key="mask_text").set_value("").run()
    assert not at.exception and len(at.info) >= 1


def test_causal_page_on_gpt1_keeps_the_mask(course_standins, tiny_model_dirs):
    fake_hub_cache(course_standins, "openai-community/openai-gpt", tiny_model_dirs["openai-gpt"])
    at = open_page("app_pages/causal_mask.py", model="openai-gpt")
    assert len(at.subheader) == 1 and any("not available" in w.value for w in at.warning)
    assert {m.label: m.value for m in at.metric}["decoder, mask on"] == "0.0"
    at.text_input(key="mask_text").set_value(" ").run()  # without the sentence, the trophy still knows GPT-1
    assert not at.exception and not at.warning and not at.subheader  # keeps its mask
    assert [m.label for m in at.metric] == ["decoder, mask on", "encoder (course-roberta)"]


def test_causal_page_with_an_encoder_picked_uses_the_course_decoder(course_standins):
    at = open_page("app_pages/causal_mask.py", model="course-roberta")
    assert any("is an encoder" in i.value for i in at.info)
    assert {m.label: m.value for m in at.metric}["decoder, mask on"] == "0.0"


def test_attention_page_caps_tokens_for_memory(course_standins, monkeypatch):
    from ui.cached import attention as cached

    monkeypatch.setattr(cached, "MEMORY_BYTES", 2 * 4 * 20 * 20 * 4)  # 2 layers x 4 heads x 20^2 floats
    at = open_page("app_pages/attention.py")
    at.text_area(key="attn_text").set_value("it was " * 20).run()  # 41 tokens
    assert not at.exception
    assert any("First 20 of 41 tokens shown (memory)" in w.value for w in at.warning)
    assert any("20 tokens" in md.value for md in at.markdown)


@pytest.mark.parametrize("budget_mb,encoder", [(1700, "roberta-base"), (1000, "course-roberta")])
def test_causal_page_default_encoder_fits_beside_the_decoder(course_standins, tiny_model_dirs, monkeypatch,
                                                             budget_mb, encoder):
    """roberta-base (612 MB by the registry) is the default only while it fits beside gpt2 (611 MB)."""
    fake_hub_cache(course_standins, "openai-community/gpt2", tiny_model_dirs["gpt2"])
    fake_hub_cache(course_standins, "FacebookAI/roberta-base", tiny_model_dirs["roberta"])
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", str(budget_mb))
    at = open_page("app_pages/causal_mask.py", model="gpt2")
    assert at.selectbox(key="trophy_encoder").value == encoder
    assert float({m.label: m.value for m in at.metric}[f"encoder ({encoder})"]) > 0


def test_attention_pages_in_portuguese(course_standins):
    at = open_page("app_pages/attention.py", lang="pt")
    assert "token anterior" in at.radio(key="attn_metric").options
    specs = " ".join(json.dumps(json.loads(c.proto.spec), ensure_ascii=False) for c in at.get("vega_lite_chart"))
    assert "query (quem olha)" in specs and "cabeça" in specs and "query (looking)" not in specs


def test_attention_page_keeps_text_and_head_across_a_page_switch(course_standins):
    at = open_page("app_pages/attention.py")
    at.text_area(key="attn_text").set_value("meu próprio texto 🏆").run()
    at.selectbox(key="attn_layer").select(1).run()
    at.selectbox(key="attn_head").select(3).run()
    at.radio(key="attn_metric").set_value("entropy").run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page("app_pages/attention.py").run()
    assert not at.exception
    assert at.text_area(key="attn_text").value == "meu próprio texto 🏆"
    assert (at.selectbox(key="attn_layer").value, at.selectbox(key="attn_head").value) == (1, 3)
    assert at.radio(key="attn_metric").value == "entropy"


def test_causal_page_keeps_its_inputs_across_a_page_switch_and_an_emptied_sentence(course_standins):
    at = open_page("app_pages/causal_mask.py")
    b = "The trophy didn't fit in the suitcase because it was too heavy."
    at.text_input(key="mask_text").set_value("Uma frase minha.").run()
    at.selectbox(key="mask_head").select(2).run()
    at.text_input(key="trophy_b").set_value(b).run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page("app_pages/causal_mask.py").run()
    assert not at.exception
    assert at.text_input(key="mask_text").value == "Uma frase minha." and at.selectbox(key="mask_head").value == 2
    assert at.text_input(key="trophy_b").value == b and at.text_input(key="trophy_word").value == "it"
    at.text_input(key="mask_text").set_value("").run()  # no heatmaps; the trophy experiment stays
    assert not at.exception and any(i.value == "Type a sentence." for i in at.info) and not at.subheader
    assert at.text_input(key="trophy_b").value == b
    assert {m.label: m.value for m in at.metric}["decoder, mask on"] == "0.0"
    at.text_input(key="mask_text").set_value("De novo.").run()
    assert not at.exception and at.text_input(key="trophy_b").value == b
    assert at.text_input(key="trophy_a").value == TROPHY["en"][0]
    assert {m.label: m.value for m in at.metric}["decoder, mask on"] == "0.0"


def test_causal_page_explains_bad_trophy_input_in_portuguese(course_standins):
    at = open_page("app_pages/causal_mask.py", lang="pt")
    at.text_input(key="trophy_word").set_value("banana").run()
    assert not at.exception and any("compara" in w.value for w in at.warning)
    assert any("não está na frase A" in x.value for x in at.text)
    at.text_input(key="trophy_word").set_value("era").run()
    at.text_input(key="trophy_b").set_value("A taça não coube na mala porque era pequena demais.").run()
    assert any("divergem antes de 'era'" in x.value for x in at.text)
    long = "O troféu não coube na mala porque era " + "muito " * 80
    at.text_input(key="trophy_a").set_value(long + "grande.").run()
    at.text_input(key="trophy_b").set_value(long + "pequena.").run()  # more tokens than the tiny model's 64
    assert not at.exception and any("o modelo aceita no máximo 64" in x.value for x in at.text)
    assert not any(w in x.value for x in at.text for w in ("not in", "differ", "more than"))


def _axis_labels(spec: str) -> list[list[str]]:
    """Every axis's token labels in a chart spec (the JSON list inside each labelExpr)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            expr = node.get("labelExpr")
            if isinstance(expr, str) and expr.startswith("["):
                found.append(json.JSONDecoder().raw_decode(expr)[0])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads(spec))
    return found


SPLIT = "O troféu não coube na mala."  # the course tokenizer splits ã into two byte tokens


def _check_readable(axes: list[list[str]], n: int) -> None:
    """Axis labels of the course tokenizer's tokens of SPLIT: ã as one character marked in two parts, no byte
    escapes, the position prefix kept, and the pieces read back as the text itself."""
    from lab.course.tokenizer import decoder_tokenizer

    tok = decoder_tokenizer()
    ids = tok(SPLIT)["input_ids"]
    assert len(ids) == n == 16
    assert axes and all(len(a) == n for a in axes)
    for labels in axes:
        assert not any("\\x" in s for s in labels), labels
        i = next(i for i, s in enumerate(labels) if "ã" in s)
        assert labels[i:i + 2] == [f"{i} ã ·1/2", f"{i + 1} ã ·2/2"]
        assert tok.decode(ids[i:i + 2]) == "ã"  # the tokenizer itself: these two tokens are one ã
        assert [s.split(" ", 1)[0] for s in labels] == [str(k) for k in range(n)]
        texts = [s.split(" ", 1)[1].replace("␣", " ").replace(" ·1/2", "") for s in labels if "·2/2" not in s]
        assert "".join(texts) == tok.decode(ids) == SPLIT


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_heatmap_axes_read_split_characters_as_text(fresh_caches, lang):
    at = open_page("app_pages/attention.py", model="course-gpt2", lang=lang)
    at.text_area(key="attn_text").set_value(SPLIT).run()
    assert not at.exception
    (heatmap,) = [c for c in at.get("vega_lite_chart") if "labelExpr" in c.proto.spec]
    _check_readable(_axis_labels(heatmap.proto.spec), 16)


def test_causal_heatmap_axes_read_split_characters_as_text(fresh_caches):
    at = open_page("app_pages/causal_mask.py", model="course-gpt2")
    at.text_input(key="mask_text").set_value(SPLIT).run()
    assert not at.exception
    heatmaps = [c for c in at.get("vega_lite_chart") if "labelExpr" in c.proto.spec]
    assert len(heatmaps) == 4  # scores and weights, mask on and off
    for chart in heatmaps:
        _check_readable(_axis_labels(chart.proto.spec), 16)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_per_head_table_shows_the_highest_first(course_standins, lang):
    """The table opens sorted by the colour-by summary, highest first ("previous" finds the previous-token
    heads at the top), and follows the radio; every head still has its one row."""
    at = open_page("app_pages/attention.py", lang=lang)

    def column(name):
        values = at.dataframe[0].value[name]
        return [float(str(v).replace(",", ".")) for v in values]  # pt shows 0,137 as text

    prev = column("previous")
    assert prev == sorted(prev, reverse=True) and len(set(prev)) > 1
    at.radio(key="attn_metric").set_value("entropy").run()
    assert not at.exception
    entropy = column("entropy")
    assert entropy == sorted(entropy, reverse=True) and len(set(entropy)) > 1
    frame = at.dataframe[0].value
    assert sorted(zip(frame["layer"], frame["head"], strict=True)) == [(la, h) for la in range(2) for h in range(4)]
