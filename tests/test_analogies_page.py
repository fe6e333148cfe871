"""The analogies page under AppTest: presets on the shipped course models, bad words, both languages."""

import json
from functools import partial

import numpy as np
import torch

from lab import embeddings
from lab.embeddings import PRESETS
from tests import pages

PAGE = "app_pages/analogies.py"


open_page = partial(pages.open_page, PAGE)


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_no_forward_pass_and_view_widgets_reuse_the_scores(course_standins, tiny_model_dirs, monkeypatch):
    from transformers import PreTrainedModel

    from lab.models import load

    count = {"forward": 0, "scores": 0}

    def hook(module, args, output):
        if isinstance(module, PreTrainedModel) and module.base_model is module:
            count["forward"] += 1

    scores = embeddings.analogy_scores

    def counted(*a, **kw):
        count["scores"] += 1
        return scores(*a, **kw)

    monkeypatch.setattr(embeddings, "analogy_scores", counted)
    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        load(str(tiny_model_dirs["gpt2"])).model(torch.tensor([[1, 2]]))
        assert count["forward"] == 1  # the hook is live
        at = open_page()
        assert count["forward"] == 1  # the page ran no forward pass
        assert count["scores"] == 1 and len(at.get("vega_lite_chart")) == 3
        at.toggle(key="an_exclude").set_value(False).run()
        at.slider(key="an_k").set_value(5).run()
        at.text_input(key="an_expected").set_value("user").run()  # an input: excluded
        assert not at.exception and count["scores"] == 1  # view-only: the cached scores re-sliced
        assert metrics(at)["Expected word's rank, inputs excluded"] == "—"
        at.radio(key="an_method").set_value("mul").run()
        assert count["scores"] == 2 and count["forward"] == 1
    finally:
        handle.remove()


def test_the_page_opens_on_an_analogy_that_holds_and_the_famous_one_is_a_click_away(fresh_caches):
    """Issue 34, item 9: the default holds on the offline model (files − file + user → users, first among the
    answers, its rank metrics filled, no warning); king − man + woman is one button away and says why it fails."""
    at = open_page()
    assert at.selectbox(key="an_preset").value == "users"
    m = metrics(at)
    assert m["Top answer"] == "␣users" and m["Expected word's rank, inputs excluded"] == "1"
    assert "—" not in m.values() and not at.warning and at.success
    at.button[0].click().run()
    assert not at.exception and at.selectbox(key="an_preset").value == "king"
    assert [at.text_input(key=k).value for k in ("an_a", "an_b", "an_c", "an_expected")] == [
        "king", "man", "woman", "queen"]
    assert any("expected word is 2 tokens on course-gpt2" in w.value for w in at.warning)


def test_every_preset_on_course_gpt2(fresh_caches):
    at = open_page()
    seen = {}
    for key in PRESETS:
        at.selectbox(key="an_preset").select(key).run()
        assert not at.exception, key
        seen[key] = (metrics(at), [w.value for w in at.warning], [s.value for s in at.success],
                     [x.value for x in at.text])
    m, warn, ok, text = seen["king"]  # " queen" is two tokens on the course model: said so
    assert any("expected word is 2 tokens on course-gpt2" in w for w in warn) and "' qu' + 'een'" in text[0]
    m, warn, ok, text = seen["rei"]  # the Portuguese words break on tokenization
    assert any("A word is 2 tokens" in w for w in warn) and "' rei' → ' re' + 'i'" in text
    for key in ("users", "removed", "smaller", "de_e", "do_no"):
        m, warn, ok, _ = seen[key]
        assert m["Expected word's rank, inputs excluded"] == "1" and ok, key
    assert seen["users"][0]["Top answer"] == "␣users"
    assert seen["users"][0]["Expected word's rank, inputs included"] == "2"  # " user" (c) comes first
    m, warn, ok, _ = seen["package"]  # the mean of Portuguese pieces: third, said so
    assert m["Expected word's rank, inputs excluded"] == "3" and any("ranks 3" in w for w in warn)
    assert at.toggle(key="an_mean").value is True


def test_encoder_presets_agree_with_the_cli_numbers(fresh_caches, capsys):
    from lab.cli import main

    at = open_page(model="course-roberta")
    at.selectbox(key="an_preset").select("package").run()
    assert main(["analogy", "--json", "--model", "course-roberta", "file", "arquivo", "pacote", "--mean-pieces",
                 "--expected", "package"]) == 0
    cli = json.loads(capsys.readouterr().out)
    m = metrics(at)
    assert m["Expected word's rank, inputs excluded"] == str(cli["expected"]["rank"]) == "2"
    assert m["Top answer"] == cli["results"][0]["token"].replace(" ", "␣")


def test_multi_token_word_and_the_mean_of_pieces(course_standins):
    at = open_page()
    at.text_input(key="an_c").set_value("rainha").run()
    assert not at.exception and any("A word is 2 tokens" in w.value for w in at.warning)
    assert any("' rainha' → ' rain' + 'ha'" in x.value for x in at.text)
    assert len(at.metric) == 0
    at.toggle(key="an_mean").set_value(True).run()
    assert not at.exception and any("Approximation" in i.value for i in at.info)
    assert len(at.metric) == 3
    table = at.dataframe[0].value
    assert list(table["tokens"]) == [1, 1, 2] and table["pieces"][2] == "␣rain + ha"


def test_empty_boxes(course_standins):
    at = open_page()
    at.text_input(key="an_b").set_value("   ").run()
    assert not at.exception and any("Type a word in each box" in i.value for i in at.info)
    at.text_input(key="an_word").set_value("").run()
    assert not at.exception and sum("Type a word in each box" in i.value for i in at.info) == 2
    at.text_input(key="an_b").set_value("man").run()
    at.text_input(key="an_expected").set_value("").run()  # no expected word: no verdict, no rank
    assert not at.exception and metrics(at)["Expected word's rank, inputs excluded"] == "—"


def test_portuguese_ui(fresh_caches, monkeypatch):
    from ui.draw import analogies as draw

    # AppTest formats the preset labels in the test's thread, which has no session (so no ?lang=pt).
    monkeypatch.setattr(draw, "t", lambda en, pt: pt)
    at = open_page(lang="pt")
    assert at.title[0].value == "Analogias de embeddings"
    assert any("vem em primeiro" in s.value for s in at.success) and not at.warning  # opens on one that holds
    at.button[0].click().run()  # the famous one, one click away, with its honest explanation
    assert at.selectbox(key="an_preset").value == "king"
    assert any("a palavra esperada tem 2 tokens" in w.value.lower() for w in at.warning)
    at.selectbox(key="an_preset").select("users").run()
    assert any("vem em primeiro" in s.value for s in at.success)
    specs = " ".join(json.dumps(json.loads(c.proto.spec), ensure_ascii=False) for c in at.get("vega_lite_chart"))
    assert "pontuação" in specs and "guardam" in specs and "keep" not in specs


def test_user_text_stays_plain_and_state_survives_a_page_switch(course_standins):
    at = open_page()
    at.text_input(key="an_a").set_value("**bold** :red[x]").run()
    assert not at.exception
    assert any("' **bold** :red[x]' → " in x.value for x in at.text)  # several tokens: quoted as typed
    assert not any("bold" in w.value for w in [*at.warning, *at.markdown, *at.info])
    at.text_input(key="an_a").set_value("queen").run()
    at.toggle(key="an_space").set_value(False).run()
    at.slider(key="an_k").set_value(7).run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.text_input(key="an_a").value == "queen" and at.toggle(key="an_space").value is False
    assert at.slider(key="an_k").value == 7


def test_the_exclude_toggle_changes_the_answers(fresh_caches):
    """Switching "exclude the three inputs" off lets an input answer: files − file + user gives " user" first
    (rank 1 among all tokens for c itself, as lab computes with nothing excluded)."""
    at = open_page()
    at.selectbox(key="an_preset").select("users").run()
    assert metrics(at)["Top answer"] == "␣users"
    at.toggle(key="an_exclude").set_value(False).run()
    assert not at.exception and metrics(at)["Top answer"] == "␣user"
    assert metrics(at)["Expected word's rank, inputs included"] == "2"


def test_rarely_trained_tokens_left_out_and_the_toggle_brings_them_back(fresh_caches):
    from lab.learned import MIN_COUNT

    at = open_page(an_preset="king")  # king − man + woman on course-gpt2
    counts = np.load("models/course-gpt2/token_counts.npy")
    left = int((counts < MIN_COUNT).sum())
    assert any(f"{left:,} tokens left out (seen fewer than {MIN_COUNT:,} times in training)" in c.value
               for c in at.caption)
    top = metrics(at)["Top answer"]
    assert top != "␣Market"
    at.toggle(key="an_rare").set_value(True).run()
    assert not at.exception and metrics(at)["Top answer"] == "␣Market"  # the crowd is back
    assert not any("left out" in c.value for c in at.caption)
