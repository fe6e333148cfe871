"""The perplexity page under AppTest, on tiny random models standing in for the course models (no network)."""

import json
from functools import partial

import pandas as pd
import pytest

from lab import perplexity
from lab.models import registry
from tests import pages
from tests.test_models import fake_hub_cache
from viz import perplexity as viz

PAGE = "app_pages/perplexity.py"


open_page = partial(pages.open_page, PAGE, timeout=120)


def parse(body: str) -> tuple[set[str], str]:
    """(every element name an HTML parser finds in body, the text it would show)."""
    from html.parser import HTMLParser

    found, text = set(), []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.add(tag)

        def handle_data(self, data):
            text.append(data)

    Collect(convert_charrefs=True).feed(body)
    return found, "".join(text)


def table(at) -> pd.DataFrame:
    return at.dataframe[0].value


def test_several_models_fill_one_table_ordered_by_size(course_standins):
    at = open_page()
    at.multiselect(key="ppl_models").set_value(["course-roberta", "course-gpt2", "course-gpt2-2x128"]).run()
    assert not at.exception and not at.warning
    frame = table(at)
    assert list(frame["model"]) == sorted(frame["model"], key=lambda n: registry.info(n).params)
    assert "pseudo" in frame.loc[frame["model"] == "course-roberta", "note"].item()
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert specs and "bits per byte" in json.dumps(specs)


def test_the_page_shows_what_the_cli_computes(course_standins, tiny_model_dirs, tmp_path, capsys):
    from lab.cli import main

    at = open_page()
    at.selectbox(key="ppl_source").select("own").run()
    text = "The last bus leaves at eleven forty, and the driver waits when it rains."
    at.text_area(key="ppl_text").set_value(text).run()
    at.multiselect(key="ppl_models").set_value(["course-gpt2"]).run()
    shown = table(at).iloc[0]
    f = tmp_path / "t.txt"
    f.write_text(text, encoding="utf-8")
    assert main(["perplexity", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--file", str(f)]) == 0
    cli = json.loads(capsys.readouterr().out)["results"][0]
    assert shown["tokens predicted"] == f"{cli['tokens']:,}"
    assert shown["ppl / token"] == f"{cli['ppl']:,.2f}" and shown["bits / byte"] == f"{cli['bits_per_byte']:.3f}"


def test_results_survive_a_page_switch_without_another_forward(course_standins, forwards):
    at = open_page()
    at.multiselect(key="ppl_models").set_value(["course-gpt2", "course-gpt2-1x64"]).run()
    ran = forwards["n"]
    assert ran >= 2  # the counter is live
    at.selectbox(key="ppl_strip").select("course-gpt2-1x64").run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.multiselect(key="ppl_models").value == ["course-gpt2", "course-gpt2-1x64"]
    assert len(table(at)) == 2 and forwards["n"] == ran


def test_a_model_over_the_budget_is_reported_and_the_others_still_run(course_standins, tiny_model_dirs, monkeypatch):
    fake_hub_cache(course_standins, "openai-community/gpt2-xl", tiny_model_dirs["gpt2"])
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", "1000")  # gpt2-xl needs ~6.9 GB by the registry
    at = open_page()
    at.multiselect(key="ppl_models").set_value(["course-gpt2", "gpt2-xl"]).run()
    assert not at.exception
    assert any("gpt2-xl" in w.value for w in at.warning)
    assert list(table(at)["model"]) == ["course-gpt2"]


def test_a_model_missing_offline_is_a_warning_not_an_exception(course_standins):
    at = open_page()
    at.multiselect(key="ppl_models").set_value(["course-gpt2", "gpt2-medium"]).run()
    assert not at.exception and any("gpt2-medium" in w.value for w in at.warning)


@pytest.mark.parametrize("text", ["", "   \n  "])
def test_an_empty_text_says_so(course_standins, text):
    at = open_page()
    at.selectbox(key="ppl_source").select("own").run()
    at.text_area(key="ppl_text").set_value(text).run()
    assert not at.exception and not at.dataframe
    assert any("Type or choose a text" in i.value for i in at.info)


def test_one_token_is_a_clear_message(course_standins):
    at = open_page()
    at.selectbox(key="ppl_source").select("own").run()
    at.text_area(key="ppl_text").set_value("Hello").run()
    at.multiselect(key="ppl_models").set_value(["course-gpt2"]).run()
    assert not at.exception and any("single token" in w.value for w in at.warning)


def test_no_model_chosen_says_so(course_standins):
    at = open_page()
    at.multiselect(key="ppl_models").set_value([]).run()
    assert not at.exception and any("Choose at least one model" in i.value for i in at.info)


def test_in_portuguese_headers_and_numbers(course_standins):
    at = open_page(lang="pt")
    at.multiselect(key="ppl_models").set_value(["course-gpt2"]).run()
    frame = table(at)
    assert {"modelo", "parâmetros", "tokens previstos", "ppl / palavra"} <= set(frame.columns)
    assert "," in frame["bits / byte"].iloc[0] and "." not in frame["bits / byte"].iloc[0]
    assert any("Qual coluna comparar" in i.value for i in at.info)


def test_user_text_is_escaped_in_the_surprisal_views(course_standins):
    at = open_page()
    at.selectbox(key="ppl_source").select("own").run()
    payload = 'Hi <img src=x onerror="alert(1)"> & <script>alert(2)</script> ok'
    at.text_area(key="ppl_text").set_value(payload).run()
    at.multiselect(key="ppl_models").set_value(["course-gpt2", "course-gpt2-1x64"]).run()
    bodies = [h.proto.body for h in at.get("html") if not h.proto.body.startswith("<style>")]  # less the app CSS
    assert len(bodies) == 2
    for body in bodies:  # only the views' own tags survive; the payload is shown as the text it is
        found, shown = parse(body)
        assert found <= {"div", "span"} and shown == payload


def test_scale_chart_uses_only_course_decoders_with_a_unigram_baseline():
    ids = list(range(100, 140))
    unigram = perplexity.unigram_nll(ids, range(1, 40))
    results = [{"model": m, "non_embedding": n, "ppl": p, "tokens": 39, "unigram_nll": unigram}
               for m, n, p in (("course-gpt2", 3_159_552, 30.0), ("course-gpt2-1x64", 50_112, 90.0))]
    results.append({"model": "gpt2", "non_embedding": 85_000_000, "ppl": 20.0, "tokens": 39})
    frame = viz.scale_frame(results)
    assert list(frame["model"]) == ["course-gpt2-1x64", "course-gpt2"]
    assert (frame["unigram_ppl"] > 0).all()
    spec = viz.scale_chart(frame, "t", "x", "y", "unigram").to_dict()
    assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"


def chips(body: str) -> list[tuple[str, str, str]]:
    """(class, title, text) of each span of a surprisal view."""
    from html.parser import HTMLParser

    out, open_ = [], []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "span":
                a = dict(attrs)
                open_.append([a.get("class", ""), a.get("title", ""), ""])

        def handle_data(self, data):
            if open_:
                open_[-1][2] += data

        def handle_endtag(self, tag):
            if tag == "span" and open_:
                out.append(tuple(open_.pop()))

    Collect(convert_charrefs=True).feed(body)
    return out


def test_split_characters_read_whole_with_their_pieces_bits_summed(fresh_caches):
    """The shipped course-gpt2 splits some accented letters into two byte tokens each: the surprisal strip shows each
    such character as one chip, marked, whose bits are the sum of its pieces' bits as transformers computes them."""
    import math
    import re

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    text = "O troféu não coube na mala porque ele era grande demais, e as versões antigas também."
    path = registry.info("course-gpt2").path
    tok, model = AutoTokenizer.from_pretrained(path), AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    ids = tok(text)["input_ids"]
    with torch.inference_mode():  # the oracle: one pass (the text is far shorter than the context)
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
    bits = [None] + [float(-logp[i - 1, ids[i]]) / math.log(2) for i in range(1, len(ids))]
    pieces = [i for i, t in enumerate(ids) if "\ufffd" in tok.decode([t])]  # a token alone is not a character
    split = {ch for i in pieces for ch in tok.decode(ids[i:i + 2]) if ord(ch) > 127} - {"\ufffd"}  # what they make
    assert len(split) >= 2, "course-gpt2 changed: pick a text whose accents split"
    at = open_page(lang="pt")
    at.selectbox(key="ppl_source").select("own").run()
    at.text_area(key="ppl_text").set_value(text).run()
    at.multiselect(key="ppl_models").set_value(["course-gpt2"]).run()
    body = next(h.proto.body for h in at.get("html") if 'class="surprisal"' in h.proto.body)
    assert parse(body)[1] == text
    shown = chips(body)
    joined = [c for c in shown if "ppl-joined" in c[0]]
    assert split <= {ch for _, _, t in joined for ch in t} and not any("\ufffd" in t for _, _, t in shown)
    offsets = tok(text, return_offsets_mapping=True)["offset_mapping"]
    for _, title, chip in joined:  # each: the pieces covering its characters, their oracle bits summed
        start = text.index(chip) if text.count(chip) == 1 else None
        if start is None:
            continue
        covering = [i for i in pieces if offsets[i][0] >= start and offsets[i][1] <= start + len(chip)]
        want = sum(bits[i] for i in covering)
        got = float(re.search(r": ([\d.,]+) bits", title).group(1).replace(".", "").replace(",", "."))
        assert abs(got - want) < 0.01 and f"({len(covering)} tokens, somados)" in title, (chip, title, want)
