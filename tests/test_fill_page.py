"""The fill-in-the-blank page under AppTest, in both languages, on the shipped course models: the fills equal
lab.fill's (the order choice is used), the button inserts a mask, the table equals lab.fill.compare, the
masking section follows its toggle, seed and epoch, the paper's figures and the sources; bad input."""

import html
import re
from functools import partial

import pytest

from lab import fill
from lab.models import load, registry
from tests import pages
from tests.test_tokens_page import chart_data

PAGE = "app_pages/fill.py"
open_page = partial(pages.open_page, PAGE, timeout=180)


def sentence(at) -> str:
    (body,) = [h.proto.body for h in at.get("html") if 'class="fill-sentence"' in h.proto.body]
    return body


def chips(at) -> list[tuple[str, str]]:
    (body,) = [h.proto.body for h in at.get("html") if 'class="fill-chips"' in h.proto.body]
    return [(a, html.unescape(s)) for a, s in re.findall(r'data-action="(\w+)"[^>]*>([^<]*)</span>', body)]


def candidates(at, k=0):
    charts = [c for c in at.get("vega_lite_chart") if '"field": "token"' in c.proto.spec and "rank" in c.proto.spec]
    return list(chart_data(charts[k])["token"])


def test_english_fills_equal_the_labs(fresh_caches):
    at = open_page()
    assert at.title[0].value == "Fill in the blank, or continue the text"
    encoder = load("course-roberta")
    want = fill.fill(encoder, "The <mask> manager installs the package.", 5)["masks"][0]["candidates"]
    assert candidates(at) == [c["token"] for c in want]
    best = f'<mark class="fill-best" style="background:#ffe58a">{want[0]["token"]}</mark>'
    assert f"The{best} manager" in sentence(at)
    assert any("Encoder: course-roberta" in c.value for c in at.caption)


def test_several_masks_on_their_own_or_in_order(fresh_caches):
    text = "The <mask> manager installs the <mask>."
    own = open_page(state={"fill_text": text})
    order = open_page(state={"fill_text": text}, fill_order="order")
    encoder = load("course-roberta")
    want_own = fill.fill(encoder, text, 5)["masks"][1]["candidates"]
    want_order = fill.fill_in_order(encoder, text, 5)["masks"][1]["candidates"]
    assert [c["id"] for c in want_own] != [c["id"] for c in want_order]  # the two ways differ on this text
    strip = lambda cs: [c["token"].strip() for c in cs]  # noqa: E731
    assert [s.strip() for s in candidates(own, 1)] == strip(want_own)
    assert [s.strip() for s in candidates(order, 1)] == strip(want_order)
    assert any("each mask filled on its own" in c.value.lower() for c in own.caption)
    assert any("one after another" in c.value for c in order.caption)


def test_the_button_inserts_a_mask(fresh_caches):
    at = open_page(state={"fill_text": "Debian is a free"})
    assert any("has no mask" in w.value for w in at.warning)
    at.button[0].click().run()
    assert at.text_area(key="fill_text").value == "Debian is a free <mask>"
    assert not at.warning or not any("has no mask" in w.value for w in at.warning)


def test_the_table_equals_lab_compare(fresh_caches):
    at = open_page()
    table = next(d.value for d in at.dataframe if "p course-gpt2" in d.value.columns and "rank E" in d.value.columns)
    want = fill.compare(load("course-roberta"), load("course-gpt2"),
                        "The trophy didn't fit in the suitcase because it was too big.")["positions"]
    assert list(table["p course-roberta"]) == [f"{100 * r['encoder_p']:.2f} %" for r in want]
    assert list(table["rank D"]) == ["—"] + [f"{r['decoder_rank']:,}" for r in want[1:]]
    trophy = next(d.value for d in at.dataframe if "sentence" in d.value.columns)
    it = trophy[trophy["token"] == " it"]
    assert len(it) == 2 and it["p course-gpt2"].nunique() == 1 and it["p course-roberta"].nunique() == 2


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_trophy_pair_compares_the_word_that_refers_back_and_the_word_that_decides(fresh_caches, lang):
    """Issue 34, item 8: per sentence, the pronoun (the same token in both: the decoder's probability of it the same,
    the encoder's not) and the deciding word, whose tokens differ between the sentences ("big"/"small",
    "grande"/"pequena"), each checked against transformers' own models on the shipped files."""
    import torch
    from transformers import AutoModelForCausalLM

    at = open_page(lang=lang)
    trophy = next(d.value for d in at.dataframe if {"sentence", "frase"} & set(d.value.columns))
    trophy.columns = ["sentence", "token", "p_enc", "p_dec"]
    a, b = trophy.iloc[:2], trophy.iloc[2:]
    assert list(a["sentence"].unique()) != list(b["sentence"].unique())
    assert a["token"].iloc[0] == b["token"].iloc[0] == {"en": " it", "pt": " el"}[lang]  # " ela" starts " el"
    assert a["p_dec"].iloc[0] == b["p_dec"].iloc[0] and a["p_enc"].iloc[0] != b["p_enc"].iloc[0]
    deciding = (a["token"].iloc[1], b["token"].iloc[1])
    assert deciding[0] != deciding[1]  # the compared tokens differ between the two sentences
    assert deciding == {"en": (" big", " small"), "pt": (" grand", " pe")}[lang]
    # the decoder's figure for the pronoun, from transformers' own model on the shipped files
    path = registry.info("course-gpt2").path
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    tok = load("course-gpt2").tokenizer
    ids = tok(a["sentence"].iloc[0])["input_ids"]
    k = next(i for i, x in enumerate(ids) if tok.convert_ids_to_tokens([x])[0] == "Ġ" + a["token"].iloc[0][1:])
    with torch.no_grad():
        p = torch.softmax(model(torch.tensor([ids[:k]])).logits[0, -1], -1)[ids[k]].item()
    assert a["p_dec"].iloc[0] == (f"{100 * p:.2f} %" if lang == "en" else f"{100 * p:.2f} %".replace(".", ","))


def test_masking_follows_toggle_seed_and_epoch(fresh_caches):
    text = "The package manager installs the package and its dependencies."
    ids = load("course-roberta").tokenizer(text)["input_ids"]
    for dynamic in (True, False):
        for seed, epoch in ((0, 1), (3, 4)):
            at = open_page(fill_dynamic=str(dynamic).lower(), fill_seed=str(seed), fill_epoch=str(epoch))
            want = fill.masking_epochs(ids, 10, seed, dynamic)[epoch - 1][1:-1]
            assert [a for a, _ in chips(at)] == [a or "none" for a in want]


def test_portuguese_words_numbers_and_defaults(fresh_caches):
    at = open_page(lang="pt")
    assert at.title[0].value == "Preencher a lacuna, ou continuar o texto"
    assert at.text_area(key="fill_text").value == "O arquivo de configuração fica no diretório <mask>."
    assert at.text_area(key="fill_pair").value == "A taça não coube na mala porque ela era grande demais."
    shown = " ".join(str(v) for d in at.dataframe for v in d.value.to_numpy().ravel())
    assert "78,7" in shown and "40.478" in shown and "50.257" in shown


def test_the_papers_figures_and_their_sources(fresh_caches):
    at = open_page()
    masking = next(d.value for d in at.dataframe if "SQuAD 2.0" in d.value.columns and len(d.value) == 3
                   and "MNLI-m" in d.value.columns and "ppl" not in d.value.columns)
    assert list(masking["SQuAD 2.0"]) == ["76.3", "78.3", "78.7"]
    history = next(d.value for d in at.dataframe if "GPT-1" in d.value.columns).set_index("decision")
    assert "ln_1(x + a)" in history.loc["layer norm", "GPT-1"] and history.loc["context (tokens)", "GPT-2"] == "1,024"
    assert "arxiv.org/abs/1907.11692" in " ".join(c.value for c in at.caption)


@pytest.mark.parametrize("text,words", [("no mask", "has no mask"), ("instal<mask> it", "inside a word"),
                                        ("", "text is empty")])
def test_bad_fill_input_says_so_and_the_rest_stays(fresh_caches, text, words):
    at = open_page(state={"fill_text": text})
    assert any(words in w.value for w in at.warning)
    assert any("GPT-1" in d.value.columns for d in at.dataframe)  # the sections below still drawn


def test_a_decoder_that_splits_differently_is_named(course_standins):
    """With the tiny stand-ins, course-roberta has the whole GPT-2 BPE and course-gpt2-1x64 too: same split;
    the comparison runs. (The refusal itself: tests/test_fill.py.)"""
    at = open_page(fill_decoder="course-gpt2-1x64")
    assert any("p course-gpt2-1x64" in d.value.columns for d in at.dataframe)
