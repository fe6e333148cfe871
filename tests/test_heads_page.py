"""The heads page under AppTest, in both languages, on the shipped course models (offline, small)."""

from functools import partial

import pytest

from lab import heads, models
from tests import pages

PAGE = "app_pages/heads.py"
open_page = partial(pages.open_page, PAGE)


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("lang, first, second, knocked", [
    ("en", "First copy", "Second copy", "Loss with these heads out"),
    ("pt", "Primeira cópia", "Segunda cópia", "Perda sem essas cabeças")])
def test_the_page_shows_what_the_lab_computes_in_both_languages(fresh_caches, lang, first, second, knocked):
    at = open_page(lang=lang, heads_knock="3.3", heads_length="12", heads_seed="3")
    loaded = models.load("course-gpt2")
    r = heads.copying(loaded.model, loaded.tokenizer, length=12, seed=3)
    k = heads.knockout(loaded.model, r["ids"], [(3, 3)])
    sep = "," if lang == "pt" else "."
    shown = metrics(at)
    assert shown[first] == f"{r['first_half']:.2f} bits".replace(".", sep)
    assert shown[second] == f"{r['second_half']:.2f} bits".replace(".", sep)
    assert shown[knocked] == f"{k['knocked'].mean():.2f} bits".replace(".", sep)
    best = heads.best(r["induction"])[0]
    named = {"en": f"layer {best['layer']} head {best['head']}", "pt": f"camada {best['layer']} cabeça {best['head']}"}
    assert any(named[lang] in md.value for md in at.markdown)
    assert len(at.get("vega_lite_chart")) >= 3
    assert "heads knockout" in at.code[-1].value and "--heads 3.3" in at.code[-1].value


@pytest.mark.parametrize("text, en, pt", [
    ("   ", "The text is empty", "O texto está vazio"),
    ("a", "The text is one token", "O texto tem um só token")])
def test_bad_text_is_refused_with_a_message(fresh_caches, text, en, pt):
    for lang, words in (("en", en), ("pt", pt)):
        at = open_page(lang=lang, heads_source="own", heads_text=text)
        assert any(words in w.value for w in at.warning), [w.value for w in at.warning]


def test_own_text_shows_the_loss_and_previous_token_scores(fresh_caches):
    at = open_page(heads_source="own", heads_text="The cat sat on the mat. The cat sat on the mat.")
    assert "First copy" not in metrics(at) and "Loss with these heads out" in metrics(at)
    assert any("Best previous-token heads" in md.value for md in at.markdown)


def test_a_head_past_the_model_in_a_link_is_dropped(fresh_caches):
    at = open_page(heads_knock="9.9")
    assert at.multiselect(key="heads_knock").value == []
