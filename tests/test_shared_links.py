"""Shareable links under AppTest: each page opened from a crafted URL shows that view; garbage in a URL
falls back to the defaults with a notice and never raises; a changed widget reaches the URL.

Tiny random models stand in for the course models (no network). The codecs are fuzzed on their own
(hypothesis), then every page is fuzzed through the app.
"""

import json
import random

import pyarrow as pa
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from lab import tokens
from lab.causal import TROPHY
from lab.embeddings import PRESETS
from lab.lens import DEFAULT_TEXT as LENS_DEFAULT
from lab.sampling import PROMPTS
from tests.pages import matrix, open_page, script
from ui import url_codecs as codecs
from ui.url_codecs import MAX_LINK_TEXT, LinkValueError

PAGES = matrix("shared_links")  # every page of the manifest (tests/pages.py), by its url path
HUGE = "a" * 100_000
NOTICE = ("Ignored from the link", "Ignorado do link")


def open_link(page: str, **params) -> AppTest:
    """The app opened from a URL carrying `params`, then on `page` (a teacher's link to that page)."""
    return open_page(script(page), timeout=90, **params)


WIDGETS = ("text_area", "text_input", "selectbox", "radio", "slider", "select_slider", "multiselect",
           "number_input", "checkbox", "toggle")


def shown(at: AppTest, key: str):
    """The value the widget `key` shows, whatever its kind."""
    for kind in WIDGETS:
        try:
            return getattr(at, kind)(key=key).value
        except KeyError:
            continue
    raise KeyError(key)


def notices(at: AppTest) -> list[str]:
    """The page's "ignored from the link" warnings."""
    return [w.value for w in at.warning if w.value.startswith(NOTICE)]


def chart_frames(at: AppTest) -> list:
    """Every Vega-Lite chart's first dataset as a DataFrame (Streamlit sends them apart from the spec)."""
    return [pa.ipc.open_stream(c.proto.datasets[0].data.data).read_all().to_pandas()
            for c in at.get("vega_lite_chart") if c.proto.datasets]


def eager_attentions(model_dir, ids, causal=True):
    """transformers' own attention weights (eager), the oracle: a tuple of (1, H, T, T) per layer."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        return model(torch.tensor([ids]), output_attentions=True).attentions


# --- the codecs alone -------------------------------------------------------------------------------

@pytest.mark.parametrize("codec, raw, value", [
    (codecs.integer(0, 11), "3", 3), (codecs.integer(0, 11), " 11 ", 11), (codecs.integer(-2, 2), "-2", -2),
    (codecs.real(0.0, 2.0), "0.7", 0.7), (codecs.real(0.0, 2.0), "2", 2.0), (codecs.boolean(), "FALSE", False),
    (codecs.boolean(), "1", True), (codecs.choice(["course", "all", 0, 1]), "1", 1),
    (codecs.choice([0.125, 0.5]), "0.5", 0.5), (codecs.choices(["a", "b", "c"]), "c,a,c", ["c", "a"]),
    (codecs.choices(["a", "b"]), "", []), (codecs.text(), "é <b> ç", "é <b> ç")])
def test_codecs_read_what_they_write(codec, raw, value):
    assert codec.parse(raw) == value and type(codec.parse(raw)) is type(value)
    assert codec.accepts(value) and codec.parse(codec.format(value)) == value


@pytest.mark.parametrize("codec, raw, reason", [
    (codecs.integer(0, 11), "12", "out_of_range"), (codecs.integer(0, 11), "-5", "out_of_range"),
    (codecs.integer(0, 11), "1e999", "not_integer"), (codecs.integer(0, 11), "3.0", "not_integer"),
    (codecs.integer(0, 11), "٣", "not_integer"), (codecs.integer(0, 11), "9" * 5000, "not_integer"),
    (codecs.integer(0, -1), "0", "out_of_range"), (codecs.real(0.0, 2.0), "nan", "not_finite"),
    (codecs.real(0.0, 2.0), "1e999", "not_finite"), (codecs.real(0.0, 2.0), "-inf", "not_finite"),
    (codecs.real(0.0, 2.0), "2.5", "out_of_range"),
    (codecs.real(0.0, 2.0, least=1e-6), "1e-320", "near_zero"), (codecs.real(0.0, 2.0), "<script>", "not_number"),
    (codecs.boolean(), "maybe", "not_boolean"), (codecs.choice(["a"]), "A", "unknown_choice"),
    (codecs.choices(["a", "b"]), "a,gpt9", "unknown_choice"), (codecs.text(), HUGE, "too_long")])
def test_codecs_refuse_garbage_with_a_reason(codec, raw, reason):
    with pytest.raises(LinkValueError) as e:
        codec.parse(raw)
    assert e.value.reason == reason


def test_a_session_value_out_of_range_or_of_another_type_is_not_accepted():
    assert not codecs.integer(0, 3).accepts(4) and not codecs.integer(0, 3).accepts(True)
    assert not codecs.integer(0, 3).accepts(None) and not codecs.real(0.0, 1.0).accepts(float("nan"))
    assert not codecs.choice([0, 1]).accepts(False) and not codecs.choice(["a"]).accepts(["a"])
    assert codecs.text(5).accepts("longer than five") and codecs.text(5).format("longer than five") is None


ALL_CODECS = [codecs.integer(0, 11), codecs.real(0.01, 1.0), codecs.boolean(), codecs.text(),
              codecs.choice(["course", "all", 0, 1, 2]), codecs.choices(["gpt2", "course-gpt2"]),
              codecs.choice([0.125, 0.25, 0.5, 1.0])]


@given(st.text(max_size=3000))
@example("0\x1f")  # found by this test: str.strip() takes "\x1f", int() does not
def test_codecs_raise_nothing_but_link_value_error(raw):
    for codec in ALL_CODECS:
        try:
            value = codec.parse(raw)
        except LinkValueError:
            continue
        assert codec.accepts(value)  # what a link gives is a value the page takes


# --- every page opened from a link ----------------------------------------------------------------

def test_tokens_link(course_standins):
    from tests.test_tokens_page import expected_costs, shown_costs

    pair = tokens.sample_pairs()[2]
    at = open_link("tokens", tokens_sample="2", tokens_encoding="o200k_base")
    assert shown(at, "tokens_sample") == 2 and shown(at, "tokens_encoding") == "o200k_base"
    assert (shown(at, "tokens_pt"), shown(at, "tokens_en")) == (pair["pt"], pair["en"])
    assert shown_costs(at.table[0]) == expected_costs(pair["pt"])
    (chips,) = [h for h in at.get("html") if "tok-chip" in h.proto.body]
    assert chips.proto.body.count('class="tok-chip"') == len(tokens.token_records("o200k_base", pair["pt"]))
    mine = "Meu próprio texto, só em português."
    at = open_link("tokens", tokens_pt=mine, tokens_en="")
    assert shown(at, "tokens_pt") == mine and shown(at, "tokens_en") == ""
    assert shown_costs(at.table[0]) == expected_costs(mine) and len(at.table) == 2  # no English costs table
    assert not notices(at)


def test_analogies_link(course_standins):
    a, b, c, d, _ = PRESETS["paris"]
    at = open_link("analogies", an_preset="paris", an_method="mul", an_k="4", an_exclude="false",
                   an_space="false", an_word="the", an_nk="3")
    assert [shown(at, k) for k in ("an_preset", "an_a", "an_b", "an_c", "an_expected")] == ["paris", a, b, c, d]
    assert [shown(at, k) for k in ("an_method", "an_k", "an_exclude", "an_space", "an_word", "an_nk")] == \
        ["mul", 4, False, False, "the", 3]
    assert list(at.dataframe[0].value["word"]) == [a, b, c]  # the words looked up are the link's
    answers, neighbours = [f for f in chart_frames(at) if {"rank", "token", "score"} <= set(f.columns)]
    assert len(answers) == 4 and len(neighbours) == 3
    assert not notices(at)


def test_attention_link(course_standins, tiny_model_dirs):
    from transformers import AutoTokenizer

    from lab.text import encode

    text = "The cat sat on the mat because it was tired."
    at = open_link("attention", attn_text=text, attn_layer="1", attn_head="3", attn_metric="entropy")
    assert [shown(at, k) for k in ("attn_text", "attn_layer", "attn_head", "attn_metric")] == [text, 1, 3, "entropy"]
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert any(json.dumps("Layer 1, head 3") in s for s in specs)
    ids = encode(AutoTokenizer.from_pretrained(tiny_model_dirs["gpt2"]), text)
    oracle = eager_attentions(tiny_model_dirs["gpt2"], ids)[1][0, 3].numpy()
    heat = next(f for f in chart_frames(at) if {"query", "key", "value"} <= set(f.columns))
    got = heat.pivot(index="query", columns="key", values="value").to_numpy()
    assert got.shape == oracle.shape
    assert abs(got - oracle).max() < 1e-5  # the heatmap is layer 1, head 3 of this text
    assert not notices(at)


def test_causal_link(course_standins, tiny_model_dirs):
    from transformers import AutoTokenizer

    from lab.text import encode

    text = "A small dog barked at the mailman."
    at = open_link("causal_mask", mask_text=text, mask_layer="1", mask_head="2", trophy_pair="pt",
                   trophy_encoder="course-roberta")
    assert [shown(at, k) for k in ("mask_text", "mask_layer", "mask_head", "trophy_pair", "trophy_encoder")] == \
        [text, 1, 2, "pt", "course-roberta"]
    assert (shown(at, "trophy_a"), shown(at, "trophy_b"), shown(at, "trophy_word")) == TROPHY["pt"]  # the pair's
    ids = encode(AutoTokenizer.from_pretrained(tiny_model_dirs["gpt2"]), text)
    oracle = eager_attentions(tiny_model_dirs["gpt2"], ids)[1][0, 2].numpy()
    weights = [f for f in chart_frames(at) if {"query", "key", "value"} <= set(f.columns)][1]  # mask on: weights
    got = weights.pivot(index="query", columns="key", values="value").fillna(0).to_numpy()
    assert abs(got - oracle).max() < 1e-5
    assert not notices(at)


def test_lens_link(course_standins):
    text = "The quick brown fox jumps over the lazy dog"
    at = open_link("logit_lens", lens_text=text, lens_position="2", lens_word="the", lens_new_word="false")
    assert [shown(at, k) for k in ("lens_text", "lens_position", "lens_word", "lens_new_word")] == \
        [text, 2, "the", False]
    from ui.cached import lens as cached_lens

    view = cached_lens.lens_view("course-gpt2", text, "the")  # "the" as typed: no space in front
    assert list(at.dataframe[0].value["target rank"]) == list(view["rank"][:, 2])
    assert any(x.value.startswith("Following: ") and "the" in x.value for x in at.text)
    assert not notices(at)


def test_perplexity_link(course_standins, tiny_model_dirs, tmp_path, capsys):
    from lab.cli import main

    text = " ".join(["The last bus leaves at eleven forty, and the driver waits when it rains."] * 6)
    at = open_link("perplexity", ppl_source="own", ppl_text=text, ppl_models="course-gpt2", ppl_stride="0.25")
    assert [shown(at, k) for k in ("ppl_source", "ppl_text", "ppl_models", "ppl_stride")] == \
        ["own", text, ["course-gpt2"], 0.25]
    row = at.dataframe[0].value.iloc[0]
    f = tmp_path / "t.txt"
    f.write_text(text, encoding="utf-8")
    assert main(["perplexity", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--file", str(f),
                 "--stride", "16"]) == 0  # a quarter of the tiny model's 64 positions
    cli = json.loads(capsys.readouterr().out)["results"][0]
    assert row["model"] == "course-gpt2" and row["ppl / token"] == f"{cli['ppl']:,.2f}"
    assert not notices(at)


def test_sampling_link(course_standins, tiny_model_dirs):
    from tests.test_sampling_page import generate_ids, streamed

    prompt = "Once upon a time"
    at = open_link("sampling", samp_prompt=prompt, samp_temperature="0", samp_top_k="7", samp_top_p="0.5",
                   samp_seed="5", samp_n="4", samp_compare="seeds", samp_pick="2")
    assert [shown(at, k) for k in ("samp_prompt", "samp_temperature", "samp_top_k", "samp_top_p", "samp_seed",
                                   "samp_n", "samp_compare")] == [prompt, 0.0, 7, 0.5, 5, 4, "seeds"]
    assert at.session_state["samp_pick"] == 2
    assert streamed(at) == generate_ids(tiny_model_dirs["gpt2"], prompt, 4, 0.0, 7, 0.5, 5)
    assert [c.value for c in at.caption if c.value.startswith("seed ")] == [f"seed {s}" for s in range(5, 10)]
    assert not notices(at)


# --- garbage falls back, with a notice --------------------------------------------------------------

GARBAGE = {
    "tokens": {"tokens_sample": ("999", "course"), "tokens_encoding": ("gpt5", "gpt2"),
               "tokens_pt": (HUGE, tokens.course_passage()["pt"])},
    "analogies": {"an_preset": ("<script>alert(1)</script>", "users"), "an_k": ("0", 10), "an_nk": ("1e999", 10),
                  "an_exclude": ("maybe", True), "an_method": ("div", "add"), "an_a": (HUGE, "files")},
    "attention": {"attn_layer": ("-5", 0), "attn_head": ("1e999", 0), "attn_metric": ("<script>", "previous"),
                  "attn_text": (HUGE, TROPHY["en"][0])},
    "causal_mask": {"mask_layer": ("99", 0), "mask_head": ("nan", 0), "trophy_pair": ("fr", "en"),
               "trophy_encoder": ("bert-large", "course-roberta"), "mask_text": (HUGE, TROPHY["en"][0])},
    "logit_lens": {"lens_position": ("99", None), "lens_new_word": ("2", True), "lens_text": (HUGE, LENS_DEFAULT["en"]),
             "lens_word": (HUGE, "")},
    "perplexity": {"ppl_source": ("<script>", "unseen:en"), "ppl_models": ("gpt9,course-gpt2", None),
                   "ppl_stride": ("0.3", 0.5)},
    "sampling": {"samp_temperature": ("nan", 1.0), "samp_top_p": ("inf", 0.9), "samp_top_k": ("1e999", 50),
                 "samp_seed": ("-5", 0), "samp_n": ("<script>", 32), "samp_prompt": (HUGE, PROMPTS["en"]),
                 "samp_compare": ("both", "none")},
}


@pytest.mark.parametrize("page", list(GARBAGE))
def test_garbage_in_a_link_gives_the_defaults_and_a_notice(course_standins, page):
    bad = GARBAGE[page]
    at = open_link(page, **{k: raw for k, (raw, _) in bad.items()})
    (notice,) = notices(at)
    for key, (_raw, default) in bad.items():
        if default is not None:
            assert shown(at, key) == default, key
        assert f"`{key}=" in notice, key
        assert key not in at.query_params  # the URL no longer carries what was ignored
    assert len(notice) < 1500  # long values are shortened
    if any(raw == HUGE for raw, _ in bad.values()):
        assert "100,000 characters" in notice
    if page == "logit_lens":
        assert shown(at, "lens_position") == len(at.selectbox(key="lens_position").options) - 1  # the last token
    if page == "perplexity":
        assert shown(at, "ppl_models") == ["course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2"]
        assert "not one of the options" in notice


def test_the_notice_names_the_range_of_the_model_loaded(course_standins):
    at = open_link("attention", attn_layer="5", attn_head="4")  # the tiny model has 2 layers, 4 heads
    (notice,) = notices(at)
    assert "`attn_layer=5` (out of range 0–1)" in notice and "`attn_head=4` (out of range 0–3)" in notice
    assert (shown(at, "attn_layer"), shown(at, "attn_head")) == (0, 0)


def test_the_notice_quotes_values_as_plain_text_and_speaks_portuguese(course_standins):
    at = open_link("attention", lang="pt", attn_metric="**x** :red[y] $z$ `q`\n<b>", attn_head="1.5")
    (notice,) = notices(at)
    assert notice.startswith("Ignorado do link")
    assert "`attn_metric=**x** :red[y] $z$ ˋqˋ�<b>` (não é uma das opções)" in notice  # inside a code span
    assert "`attn_head=1.5` (não é um número inteiro)" in notice


def test_a_long_value_is_shortened_in_the_notice(course_standins):
    at = open_link("sampling", samp_prompt="x" * 5000)
    (notice,) = notices(at)
    assert "`samp_prompt=" + "x" * 40 + "…` (longer than 2,000 characters, 5,000 characters)" in notice


NASTY = ["", " ", "-0", "+3", " 3 ", "3.0", "0x10", "1_0", "１", "٣", "1e-999", "-1e999", "nan", "NaN", "inf",
         "true", "FALSE", ",", ",,,", "[]", "{}", "null", "None", "\x00", "\n\r\t", "%00", "%ZZ", "'; DROP TABLE",
         "<img src=x onerror=alert(1)>", "{{7*7}}", "${x}", "☃" * 3000, "\U0001F600" * 10, "a,b,c",
         "course-gpt2,course-gpt2", "9" * 400, "0.1" * 30, "2147483648", "-2147483649", HUGE]
# Every page's link inputs, as the lessons' catalogue (lab/data/lesson_inputs.json) lists them, and the windows
# onto a long text that it leaves out (their range is the text's, not the page's: scripts/lesson_headless.py).
WINDOWS = {"attention": ["attn_start"], "logit_lens": ["lens_start"]}


def link_keys(page: str) -> list[str]:
    from lab.lessons import catalogue

    return list(catalogue()[page]) + WINDOWS.get(page, [])


@pytest.mark.parametrize("page", PAGES)
def test_fuzzed_links_never_raise(course_standins, page):
    rng = random.Random(f"links-{page}")
    params = {k: rng.choice(NASTY) for k in link_keys(page)}
    params |= {"lang": rng.choice(NASTY), "model": rng.choice(NASTY)}  # the sidebar's own parameters too
    at = open_link(page, **params)  # asserts no exception
    at.run()
    assert not at.exception
    assert len(notices(at)) <= 1  # one notice at most, however much garbage


# --- the URL follows the page --------------------------------------------------------------------------

def test_a_changed_widget_reaches_the_url_and_defaults_stay_out(course_standins):
    at = open_link("attention")
    assert not any(k.startswith("attn_") for k in at.query_params)  # all defaults: a short link
    at.selectbox(key="attn_head").select(2).run()
    at.radio(key="attn_metric").set_value("self").run()
    assert (at.query_params["attn_head"], at.query_params["attn_metric"]) == ("2", "self")
    at.selectbox(key="attn_head").select(0).run()  # back to the default: out of the link again
    assert "attn_head" not in at.query_params and at.query_params["model"] == "course-gpt2"


def test_the_url_changing_under_the_page_wins(course_standins):
    """As Back/Forward does: the URL moves while the widget stays where this session left it."""
    at = open_link("attention")
    at.selectbox(key="attn_head").select(2).run()
    at.query_params["attn_head"] = "3"
    at.run()
    assert shown(at, "attn_head") == 3
    del at.query_params["attn_head"]  # back to the entry before the first change: the default
    at.run()
    assert shown(at, "attn_head") == 0 and not notices(at)


def switch(at: AppTest, page: str) -> None:
    """A click in the navigation, as the browser does it: the query string is dropped (AppTest keeps it)."""
    for k in list(at.query_params):
        del at.query_params[k]
    at.switch_page(script(page)).run()
    assert not at.exception


def test_inputs_survive_a_page_switch_and_return_to_the_link(course_standins):
    at = open_link("sampling")
    at.slider(key="samp_temperature").set_value(0.5).run()
    switch(at, "tokens")
    assert at.query_params["view"] == "tokens" and "samp_temperature" not in at.query_params
    switch(at, "sampling")
    assert shown(at, "samp_temperature") == 0.5 and at.query_params["samp_temperature"] == "0.5"
    switch(at, "home")  # a page without inputs in between
    switch(at, "sampling")
    assert shown(at, "samp_temperature") == 0.5 and at.query_params["samp_temperature"] == "0.5"


def links_to(at: AppTest, path: str, language: str) -> list[dict[str, str]]:
    """The query strings of the home map's links (st.page_link) to the page `path`, as dicts."""
    from urllib.parse import parse_qsl

    from ui.chapters import TITLES

    title = TITLES[path][language == "pt"]
    return [dict(parse_qsl(e.proto.query_string)) for e in at.get("page_link") if e.proto.label.endswith(f"→ {title}")]


@pytest.mark.parametrize("language", ["en", "pt"])
def test_a_link_to_a_page_carries_what_its_arrival_writes(course_standins, language):
    """The home map's links carry the query string the page's own run writes on arrival (the sidebar's
    parameters, ?view=, this session's inputs that are not defaults), so the arrival changes nothing: Streamlit
    then pushes one history entry, not two, and one Back returns (the browser check: test_browser_ceiling)."""
    at = open_link("attention", lang=language)
    at.selectbox(key="attn_head").select(2).run()
    switch(at, "home")
    [link] = links_to(at, "app_pages/attention.py", language)[:1]
    assert link == {"lang": language, "model": "course-gpt2", "view": "attention", "attn_head": "2"}
    tokens = links_to(at, "app_pages/tokens.py", language)[0]
    assert tokens == {"lang": language, "model": "course-gpt2", "view": "tokens"}
    for k in list(at.query_params):
        del at.query_params[k]
    for k, v in link.items():
        at.query_params[k] = v
    at.switch_page(script("attention")).run()  # the click: Streamlit sets the link's query string, then runs
    assert dict(at.query_params) == link and shown(at, "attn_head") == 2


def test_back_onto_an_entry_the_page_did_not_write_keeps_the_view(course_standins, monkeypatch):
    """Back/Forward (simulated: the run is marked as a history navigation). Entries this page wrote carry
    ?view=<page> and are followed exactly; the ones a page switch leaves on the way (the query string
    dropped, ?lang= and ?model= written again) keep the view as it was, and never reset it."""
    from ui import url_state

    at = open_link("attention")
    at.selectbox(key="attn_head").select(2).run()
    assert at.query_params["view"] == "attention"
    monkeypatch.setattr(url_state, "_history_navigation", lambda: True)
    for k in ("view", "attn_head"):
        del at.query_params[k]
    at.run()  # an entry the page switch left
    assert shown(at, "attn_head") == 2 and at.query_params["attn_head"] == "2"  # the entry rewritten in place
    del at.query_params["attn_head"]
    at.run()  # the page's own entry from before the change (?view=attention): no attn_head, so the default
    assert shown(at, "attn_head") == 0
    at.query_params["attn_head"] = "3"
    at.run()
    assert shown(at, "attn_head") == 3
    monkeypatch.setattr(url_state, "_history_navigation", lambda: False)
    switch(at, "tokens")
    monkeypatch.setattr(url_state, "_history_navigation", lambda: True)
    switch(at, "attention")  # Back across pages, onto an entry without the page's inputs
    assert shown(at, "attn_head") == 3 and at.query_params["attn_head"] == "3"
    at.query_params["attn_head"] = "99"
    at.run()
    assert shown(at, "attn_head") == 0 and len(notices(at)) == 1  # a bad entry is still only a notice


def test_a_preset_is_one_short_parameter(course_standins):
    at = open_link("analogies")
    at.selectbox(key="an_preset").select("paris").run()
    assert at.query_params["an_preset"] == "paris"
    assert not {"an_a", "an_b", "an_c", "an_expected"} & set(at.query_params)  # the preset's own words
    at.text_input(key="an_c").set_value("Spain").run()
    assert at.query_params["an_c"] == "Spain"


def test_a_text_too_long_for_a_link_stays_out_of_it_with_a_caption(course_standins):
    at = open_link("tokens")
    long_text = "Uma frase em português. " * 100  # 2,400 characters
    at.text_area(key="tokens_pt").set_value(long_text).run()
    assert "tokens_pt" not in at.query_params and not at.exception
    assert any("more than a link carries (2,000)" in c.value for c in at.caption)
    at.text_area(key="tokens_pt").set_value(long_text[:MAX_LINK_TEXT]).run()
    assert at.query_params["tokens_pt"] == long_text[:MAX_LINK_TEXT]
    assert not any("more than a link carries" in c.value for c in at.caption)


def test_back_never_throws_away_a_text_too_long_for_a_link(course_standins, monkeypatch):
    from ui import url_state

    at = open_link("tokens")
    long_text = "Uma frase em português. " * 100
    at.text_area(key="tokens_pt").set_value(long_text).run()
    at.radio(key="tokens_encoding").set_value("cl100k_base").run()
    monkeypatch.setattr(url_state, "_history_navigation", lambda: True)
    del at.query_params["tokens_encoding"]
    at.run()  # Back: the encoding returns to its default; the pasted text, in no entry, stays
    assert shown(at, "tokens_encoding") == "gpt2" and shown(at, "tokens_pt") == long_text
