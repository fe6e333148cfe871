"""The sampling page under AppTest, on tiny random models (no network)."""

from functools import partial

import pytest
import streamlit as st
import torch
from streamlit.testing.v1 import AppTest

from lab.models import registry
from lab.sampling import PROMPTS
from tests import pages
from tests.test_models import fake_hub_cache

open_page = partial(pages.open_page, "app_pages/sampling.py")


def streamed(at: AppTest) -> list[int]:
    """The ids of the page's main generation (the newest result in session state)."""
    results = at.session_state["samp_results"]
    return [t["id"] for t in list(results.values())[-1]["tokens"]]


def generate_ids(model_dir, prompt, n, temperature, top_k, top_p, seed) -> list[int]:
    """transformers' generate with the same settings and seed (through the process RNG: the oracle)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    ids = tok(prompt)["input_ids"]
    torch.manual_seed(seed)
    out = model.generate(torch.tensor([ids]), do_sample=temperature > 0, max_new_tokens=n, top_k=top_k,
                         top_p=top_p, temperature=temperature or None, pad_token_id=0)
    return out[0, len(ids):].tolist()


def test_page_streams_generates_text_and_views_cost_no_forward_pass(course_standins, tiny_model_dirs, forwards):
    at = open_page()
    assert at.title[0].value == "Sampling"
    s = {k: at.session_state[f"samp_{k}"] for k in ("temperature", "top_k", "top_p", "seed", "n")}
    # n passes for the stream (the prompt once, then one token at a time: key-value cache); comparison B is
    # generated only when its view is opened (issue 57: work a view needs only when it is opened)
    assert forwards["n"] == s["n"] and at.radio(key="samp_compare").value == "none"
    passes = forwards["n"]
    assert streamed(at) == generate_ids(tiny_model_dirs["gpt2"], PROMPTS["en"], s["n"], s["temperature"],
                                        s["top_k"], s["top_p"], s["seed"])
    forwards["n"] = passes  # not counting the oracle's own passes
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Tokens left"].endswith("/ 50,257") and "bits" in metrics["Entropy, raw"]
    at.pills(key="samp_pick").set_value(5).run()  # inspect another token: a view change
    at.run()  # a plain rerun
    assert not at.exception and forwards["n"] == passes
    assert at.metric[3].value != "" and len(at.get("vega_lite_chart")) >= 2


def test_moving_a_setting_changes_the_text_and_the_same_seed_gives_it_back(course_standins):
    at = open_page()
    first = streamed(at)
    at.number_input(key="samp_seed").set_value(1).run()
    assert streamed(at) != first
    at.slider(key="samp_temperature").set_value(0.0).run()  # greedy: the seed no longer matters
    greedy = streamed(at)
    at.number_input(key="samp_seed").set_value(2).run()
    assert streamed(at) == greedy
    at.slider(key="samp_temperature").set_value(1.0).run()
    at.number_input(key="samp_seed").set_value(0).run()
    assert streamed(at) == first and not at.exception


def test_stop_keeps_what_was_drawn_and_the_session_goes_on(course_standins, monkeypatch, forwards):
    """A run cut short (as a Stop click or leaving the page interrupts it) keeps its partial text when
    Stop caused the rerun; without Stop the page draws the whole text again."""
    from lab.serving import shared

    real, cut = shared.steps, {"after": 3}

    def interrupted(*args, **kwargs):
        for i, step in enumerate(real(*args, **kwargs)):
            if cut["after"] is not None and i == cut["after"]:
                cut["after"] = None  # once: later generations run to the end
                st.stop()  # the script is interrupted mid-generation
            yield step

    monkeypatch.setattr(shared, "steps", interrupted)
    at = open_page()
    assert len(streamed(at)) == 3
    at.button(key="samp_stop").click().run()
    assert not at.exception and len(streamed(at)) == 3
    assert any("Stopped after 3 tokens" in c.value for c in at.caption)
    passes = forwards["n"]
    at.pills(key="samp_pick").set_value(2).run()  # the stopped text stays, and views work on it
    assert not at.exception and forwards["n"] == passes and len(streamed(at)) == 3
    at.number_input(key="samp_seed").set_value(9).run()  # new settings: a full generation
    assert len(streamed(at)) == at.session_state["samp_n"]
    at.number_input(key="samp_seed").set_value(0).run()  # back to the stopped settings: still the stopped text
    assert len(streamed(at)) == 3


def test_a_run_cut_without_stop_is_drawn_again(course_standins, monkeypatch):
    from lab.serving import shared

    real, cut = shared.steps, {"after": 2}

    def interrupted(*args, **kwargs):
        for i, step in enumerate(real(*args, **kwargs)):
            if cut["after"] is not None and i == cut["after"]:
                cut["after"] = None
                st.stop()
            yield step

    monkeypatch.setattr(shared, "steps", interrupted)
    at = open_page()
    assert len(streamed(at)) == 2
    at.switch_page("app_pages/home.py").run()  # the reader left mid-way, then comes back
    at.switch_page("app_pages/sampling.py").run()
    assert not at.exception and len(streamed(at)) == at.session_state["samp_n"]


def test_comparisons_side_by_side_and_five_seeds(course_standins, forwards):
    at = open_page()
    assert at.radio(key="samp_compare").value == "none"  # nothing compared (nor generated) until it is opened
    assert len([md for md in at.markdown if 'class="samp-text"' in md.value]) == 1 and "samp_b_temperature" not in \
        at.session_state
    n, passes = at.session_state["samp_n"], forwards["n"]
    at.radio(key="samp_compare").set_value("pair").run()
    assert forwards["n"] == passes + n  # B, generated now (greedy: n passes)
    assert at.session_state["samp_b_temperature"] == 0.0  # B starts greedy
    html = [md.value for md in at.markdown if 'class="samp-text"' in md.value]
    assert len(html) == 3  # the stream, A and B
    assert html[0] == html[1] and html[1] != html[2]
    at.radio(key="samp_compare").set_value("seeds").run()
    texts = [md.value for md in at.markdown if 'class="samp-text"' in md.value][1:]
    assert len(texts) == 5 and len(set(texts)) == 5
    assert any("5 different texts out of 5" in c.value for c in at.caption)


def test_an_encoder_gets_a_plain_message(course_standins, forwards):
    at = open_page(model="course-roberta")
    assert any("Sampling needs a decoder" in i.value for i in at.info)
    assert len(at.slider) == 0 and forwards["n"] == 0


def test_gpt1_samples_without_a_cache(course_standins, tiny_model_dirs):
    fake_hub_cache(course_standins, "openai-community/openai-gpt", tiny_model_dirs["openai-gpt"])
    at = open_page(model="openai-gpt")
    assert any("no key-value cache" in c.value for c in at.caption)
    assert len(streamed(at)) == at.session_state["samp_n"]


def test_bad_prompts_and_the_url_cannot_smuggle_settings(course_standins):
    at = open_page(temperature="-1", top_p="7", top_k="-5", seed="nan")
    assert at.session_state["samp_temperature"] == 1.0 and at.session_state["samp_top_p"] == 0.9
    at.text_area(key="samp_prompt").set_value("   ").run()
    assert not at.exception and any("Type a prompt" in i.value for i in at.info)
    at.text_area(key="samp_prompt").set_value("it was " * 40).run()  # more tokens than the tiny model's 64
    assert not at.exception and any("no room is left" in i.value for i in at.info)
    at.text_area(key="samp_prompt").set_value("it was " * 30).run()  # 61 tokens: room for 3
    assert not at.exception and at.slider(key="samp_n").max == 3 and len(streamed(at)) == 3


def test_portuguese_page_and_inputs_survive_a_page_switch(course_standins):
    at = open_page(lang="pt")
    assert at.title[0].value == "Amostragem" and at.text_area(key="samp_prompt").value == PROMPTS["pt"]
    assert any(m.label == "Entropia, bruta" for m in at.metric)
    at.slider(key="samp_top_k").set_value(7).run()
    at.switch_page("app_pages/home.py").run()
    assert any("Amostragem" in link.label and "07" in link.label for link in at.get("page_link"))
    at.switch_page("app_pages/sampling.py").run()
    assert not at.exception and at.slider(key="samp_top_k").value == 7


def test_a_longer_prompt_keeps_the_number_of_new_tokens_while_it_fits(course_standins):
    at = open_page()
    at.slider(key="samp_n").set_value(20).run()
    top = at.slider(key="samp_n").max
    at.text_area(key="samp_prompt").set_value(PROMPTS["en"] + " and a few more words").run()
    assert at.slider(key="samp_n").max < top  # less room: a new slider range (a new widget to Streamlit)
    assert at.slider(key="samp_n").value == 20 and not at.exception
    at.text_area(key="samp_prompt").set_value("a " * 50).run()  # about 50 of the 64 positions: less than 20 fit
    assert at.slider(key="samp_n").value == at.slider(key="samp_n").max < 20


def test_a_run_does_not_push_unchanged_settings_back_to_the_browser(course_standins):
    """A value the script writes is sent back over the browser's own: key presses made while a run was going
    were lost (the temperature slider stopped one 0.05 step short in Chromium). Only a change may be sent."""
    at = open_page()
    at.slider(key="samp_temperature").set_value(0.85).run()
    at.slider(key="samp_top_k").set_value(7).run()  # another setting: the temperature stays as the browser has it
    assert not at.exception and at.slider(key="samp_temperature").value == 0.85
    pushed = [k for k in ("samp_temperature", "samp_top_k", "samp_top_p", "samp_n")
              if at.slider(key=k).proto.set_value]
    assert not pushed, f"sent back to the browser unchanged: {pushed}"
    at.text_area(key="samp_prompt").set_value(PROMPTS["en"] + " and a few more words").run()
    assert at.slider(key="samp_n").proto.set_value  # a new range: the new widget is handed its value


def shown_text(body: str) -> str:
    """The text an HTML parser shows for one of the page's generated-text views (entities decoded)."""
    from html.parser import HTMLParser

    out = []

    class Collect(HTMLParser):
        def handle_data(self, data):
            out.append(data)

    Collect(convert_charrefs=True).feed(body)
    return "".join(out)


def chart_column(at, name: str) -> list:
    """Every value of column `name` in the data the page's charts carry (Arrow tables beside each spec)."""
    import pyarrow as pa

    values = []
    for chart in at.get("vega_lite_chart"):
        for ds in chart.proto.datasets:
            table = pa.ipc.open_stream(ds.data.data).read_all()
            values += table.column(name).to_pylist() if name in table.column_names else []
    return values


def test_generated_portuguese_reads_as_text_and_the_inspector_keeps_the_bytes(fresh_caches):
    """The shipped course model, its Portuguese prompt, seed 0: its text splits "ã" and "õ" into two byte tokens
    each (the course tokenizer), and every view that reads the text shows them whole, as transformers' decode
    does; the step inspector, about one token, still shows that token's own byte, in words (never \\xc3)."""
    from lab.models import load

    course = load("course-gpt2")
    at = open_page(lang="pt", samp_compare="pair")
    new = streamed(at)
    decoded = course.tokenizer.decode(new)  # the oracle: the tokenizer's own decode of the generated ids
    assert "ã" in decoded and "õ" in decoded, f"course-gpt2 changed: {decoded!r} has no split ã/õ, pick a seed"
    views = [md.value for md in at.markdown if 'class="samp-text"' in md.value]
    assert len(views) == 3  # the stream, A and B
    for body in views[:2]:
        assert shown_text(body) == PROMPTS["pt"] + decoded and "\\x" not in shown_text(body)
    assert 'class="samp-tok samp-joined" data-tokens="2"' in views[0]
    # B (greedy, its default) reads whole too: transformers' greedy generate, decoded by the tokenizer
    from transformers import AutoModelForCausalLM

    oracle = AutoModelForCausalLM.from_pretrained(registry.info("course-gpt2").path, dtype=torch.float32)
    ids = course.tokenizer(PROMPTS["pt"])["input_ids"]
    greedy = oracle.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=len(new), pad_token_id=0)
    assert shown_text(views[2]) == PROMPTS["pt"] + course.tokenizer.decode(greedy[0, len(ids):])
    # the picker names a piece as the character and its part; the inspector shows the piece's own byte
    piece = next(i for i, tid in enumerate(new) if "\ufffd" in course.tokenizer.decode([tid]))
    options = at.pills(key="samp_pick").options
    assert options[piece].endswith("·1/2") and "\\x" not in options[piece]
    at.pills(key="samp_pick").set_value(piece).run()
    drawn = next(m for m in at.metric if m.label == "Token sorteado").value.replace("\u00a0", " ")
    first_byte = decoded.encode("utf-8")[len(course.tokenizer.decode(new[:piece]).encode("utf-8"))]
    assert drawn.startswith(f"byte {first_byte:02X} (primeira metade de ") and "\\x" not in drawn  # one byte, in words
    labels = [x.replace("\u00a0", " ") for x in chart_column(at, "token")]  # a lone byte in words
    assert any(f" byte {first_byte:02X} (" in label for label in labels) and not any("\\x" in x for x in labels)


def test_a_seed_click_regenerates_only_what_the_seed_draws(course_standins, forwards):
    """Greedy never draws: comparison B (greedy by default) is not generated again when the seed changes, and a
    greedy stream is shown again without a forward pass; a sampled text is drawn anew (issue 21, 5)."""
    at = open_page(samp_compare="pair")
    n = at.session_state["samp_n"]
    assert forwards["n"] == 2 * n  # the stream and B (its view opened by the link): the counter is live
    at.number_input(key="samp_seed").set_value(1).run()
    assert not at.exception and forwards["n"] == 3 * n  # the stream only: B is the same greedy text
    at.slider(key="samp_temperature").set_value(0.0).run()  # a greedy stream: n passes once
    greedy = streamed(at)
    passes = forwards["n"]
    assert passes == 4 * n
    at.number_input(key="samp_seed").set_value(2).run()
    assert streamed(at) == greedy and forwards["n"] == passes
    at.radio(key="samp_compare").set_value("seeds").run()  # five greedy "seeds": the stream's text, no pass at all
    assert forwards["n"] == passes and any("1 different texts out of 5" in c.value for c in at.caption)


@pytest.mark.parametrize(("lang", "words"), [("en", "The server is busy: 300 generations are waiting already."),
                                             ("pt", "O servidor está ocupado: 300 gerações já estão esperando.")])
def test_a_full_engine_is_a_notice_not_a_hang(course_standins, monkeypatch, lang, words):
    """The shared engine's queue full (lab.serving.shared: EngineBusy): the reader is told, in their language, and the
    page goes on; the next run generates again (nothing of the refusal is kept as a result)."""
    from lab.serving import shared
    from lab.serving.engine import EngineBusy

    real = shared.steps

    def busy(*args, **kwargs):
        raise EngineBusy("the engine is busy", "busy", waiting=300, limit=256)
        yield  # a generator, as the real one

    monkeypatch.setattr(shared, "steps", busy)
    at = open_page(lang=lang)
    assert not at.exception and any(w.value.startswith(words) for w in at.warning), [w.value for w in at.warning]
    monkeypatch.setattr(shared, "steps", real)
    at.run()
    assert not at.exception and len(streamed(at)) == at.session_state["samp_n"]
