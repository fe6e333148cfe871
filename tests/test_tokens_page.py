"""The tokenization page under Streamlit's AppTest: default, edited and empty text, the sample set."""

import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from lab import tokens
from lab.encodings import ENCODINGS
from tests import pages
from tests.pages import APP

ROOT = Path(__file__).resolve().parents[1]
XSS = "<img src=x onerror=alert(1)>"


open_page = partial(pages.open_page, "app_pages/tokens.py", timeout=30, lang="en")  # no model needed


def html_views(at) -> list:
    """The page's st.html elements, less the app's style sheet (layout and presentation CSS)."""
    return [h for h in at.get("html") if not h.proto.body.lstrip().startswith("<style>")]


def shown_costs(table) -> dict[str, dict[str, str]]:
    """{encoding: {row label: cell}} of a costs table."""
    df = table.value
    return {name: dict(df[name]) for name in df.columns}


def chart_data(chart):
    """The chart's first dataset (Streamlit sends it apart from the spec, as Arrow) as a DataFrame."""
    import pyarrow as pa

    return pa.ipc.open_stream(chart.proto.datasets[0].data.data).read_all().to_pandas()


def expected_costs(text: str, lang: str = "en") -> dict[str, dict[str, str]]:
    """What the costs table must show for text, from lab's counts (checked against tiktoken elsewhere)."""
    def fmt(x):
        if lang == "pt":  # 1.736 and 2,18
            return f"{x:,}".replace(",", ".") if isinstance(x, int) else f"{x:.2f}".replace(".", ",")
        return f"{x:,}" if isinstance(x, int) else f"{x:.2f}"
    labels = {"en": {"tokens": "tokens", "words": "words", "chars": "characters",
                     "tokens_per_word": "tokens per word", "chars_per_token": "characters per token"},
              "pt": {"tokens": "tokens", "words": "palavras", "chars": "caracteres",
                     "tokens_per_word": "tokens por palavra", "chars_per_token": "caracteres por token"}}[lang]
    return {name: {labels[k]: fmt(v) for k, v in c.items()} for name, c in tokens.token_costs(text).items()}


def test_default_page():
    at = open_page()
    pt, en = at.text_area(key="tokens_pt").value, at.text_area(key="tokens_en").value
    assert "O troféu não coube na mala porque era grande demais." in pt and en.strip()
    assert len(at.table) == 3  # Portuguese costs, English costs, costliest words
    assert shown_costs(at.table[0]) == expected_costs(pt)
    assert shown_costs(at.table[1]) == expected_costs(en)
    window = [m for m in at.markdown.values if "1,024 tokens hold about" in m]
    pt_words = tokens.words_in_window(tokens.token_costs(pt)["gpt2"], 1024)
    en_words = tokens.words_in_window(tokens.token_costs(en)["gpt2"], 1024)
    assert window == [f"**GPT-2's 1,024 tokens hold about {pt_words:,} words of this Portuguese text, "
                      f"{en_words:,} of English.**"]
    costliest = at.table[2].value
    assert list(costliest.columns) == ["word", "tokens", "pieces"]
    assert list(costliest["word"]) == [r["word"] for r in tokens.costliest_words(pt, "gpt2", 10)]
    (chips,) = html_views(at)
    assert chips.proto.body.count('class="tok-chip"') == len(tokens.token_records("gpt2", pt))
    (chart,) = at.get("vega_lite_chart")
    for source in ("your text", f"sample set ({len(tokens.sample_pairs())} pairs)", "Petrov et al. 2023 (FLORES-200)"):
        assert json.dumps(source) in chart.proto.spec


def test_edited_text_is_counted_and_escaped():
    at = open_page()
    text = f"Olá, mundo! {XSS} A canção do coração: não há pão sem ação."
    at.text_area(key="tokens_pt").input(text).run()
    assert not at.exception
    assert shown_costs(at.table[0]) == expected_costs(text)
    at.radio(key="tokens_encoding").set_value("o200k_base").run()
    assert not at.exception
    body = html_views(at)[0].proto.body
    assert "<img" not in body and "&lt;" in body
    assert body.count('class="tok-chip"') == len(tokens.token_records("o200k_base", text))


@pytest.mark.parametrize("empty", ["", "   \n\t "])
def test_empty_text_gets_a_friendly_message(empty):
    at = open_page()
    at.text_area(key="tokens_pt").input(empty).run()
    assert not at.exception
    assert [i.value for i in at.info] == ["Type or paste some Portuguese text above to see what it costs in tokens."]
    assert len(at.table) == 0 and not html_views(at)
    (chart,) = at.get("vega_lite_chart")  # the sample set's premium still shows
    assert "sample set" in chart.proto.spec and "your text" not in chart.proto.spec


def test_without_english_no_premium_of_your_text():
    at = open_page()
    at.text_area(key="tokens_en").input("").run()
    assert not at.exception
    assert len(at.table) == 2  # Portuguese costs and costliest words
    assert "your text" not in at.get("vega_lite_chart")[0].proto.spec
    assert any(m.endswith("words of this Portuguese text.**") for m in at.markdown.values)


def test_sample_selector_fills_both_boxes_and_survives_a_page_switch():
    at = open_page()
    at.selectbox(key="tokens_sample").set_value("all").run()
    en, pt = tokens.sample_texts()
    assert at.text_area(key="tokens_pt").value == pt and at.text_area(key="tokens_en").value == en
    assert shown_costs(at.table[0]) == expected_costs(pt)
    at.selectbox(key="tokens_sample").set_value(4).run()
    assert at.text_area(key="tokens_pt").value == tokens.sample_pairs()[4]["pt"]
    at.text_area(key="tokens_pt").input("meu próprio texto").run()
    at.radio(key="tokens_encoding").set_value("cl100k_base").run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page("app_pages/tokens.py").run()
    assert not at.exception
    assert at.text_area(key="tokens_pt").value == "meu próprio texto"
    assert at.text_area(key="tokens_en").value == tokens.sample_pairs()[4]["en"]
    assert at.selectbox(key="tokens_sample").value == 4
    assert at.radio(key="tokens_encoding").value == "cl100k_base"
    body = html_views(at)[0].proto.body  # the chips follow the restored encoding
    assert body.count('class="tok-chip"') == len(tokens.token_records("cl100k_base", "meu próprio texto"))


def test_encoding_survives_an_empty_text_and_a_page_switch():
    """With no text the radio is not drawn at all; its choice must still come back."""
    at = open_page()
    at.radio(key="tokens_encoding").set_value("o200k_base").run()
    at.text_area(key="tokens_pt").input("").run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page("app_pages/tokens.py").run()
    at.text_area(key="tokens_pt").input("de novo").run()
    assert not at.exception and at.radio(key="tokens_encoding").value == "o200k_base"


def test_a_radio_click_recounts_nothing_and_chips_are_built_only_for_those_shown(monkeypatch):
    calls = []

    def spy(fn):
        def wrapped(*args, **kwargs):
            calls.append((fn.__name__, kwargs.get("limit")))
            return fn(*args, **kwargs)
        return wrapped

    for fn in ("token_costs", "premium", "costliest_words", "token_records"):
        monkeypatch.setattr(tokens, fn, spy(getattr(tokens, fn)))
    at = open_page()
    text = tokens.sample_texts()[1] + " uma frase que só este teste usa"  # new text: not cached yet
    at.text_area(key="tokens_pt").input(text).run()
    n = tokens.token_costs(text)["o200k_base"]["tokens"]
    assert n > 400
    at.radio(key="tokens_encoding").set_value("o200k_base").run()
    assert not at.exception
    calls.clear()
    at.radio(key="tokens_encoding").set_value("gpt2").run()
    at.radio(key="tokens_encoding").set_value("o200k_base").run()
    assert calls == []  # both encodings seen before: everything came from the cache
    body = html_views(at)[0].proto.body
    assert body.count('class="tok-chip"') == 400 and f"… +{n - 400:,}<" in body
    calls.clear()
    at.radio(key="tokens_encoding").set_value("cl100k_base").run()
    assert ("token_costs", None) not in calls and ("premium", None) not in calls  # counts are cached
    assert ("token_records", 400) in calls and ("token_records", None) not in calls


def test_portuguese_ui():
    at = open_page(lang="pt")
    assert at.title[0].value == "Quanto custa a tokenização em português"
    assert any("Os 1.024 tokens do GPT-2 comportam cerca de" in m for m in at.markdown.values)
    assert list(at.table[0].value.index) == ["tokens", "palavras", "caracteres", "tokens por palavra",
                                             "caracteres por token"]
    assert list(at.table[0].value.columns) == list(ENCODINGS)
    at.selectbox(key="tokens_sample").set_value("all").run()
    assert not at.exception
    en, pt = tokens.sample_texts()
    assert shown_costs(at.table[0]) == expected_costs(pt, "pt") and shown_costs(at.table[1]) == expected_costs(en, "pt")
    assert "." in shown_costs(at.table[0])["gpt2"]["caracteres"]  # thousands, the Brazilian way
    spec = at.get("vega_lite_chart")[0].proto.spec
    assert json.dumps("tokens pt ÷ tokens en") in spec and "pt tokens ÷ en tokens" not in spec
    bars = chart_data(at.get("vega_lite_chart")[0])
    source = f"conjunto de exemplos ({len(tokens.sample_pairs())} pares)"
    sample = bars[bars["source"] == source].set_index("encoding")["shown"]
    assert dict(sample) == {name: f"{p['premium']:.2f}".replace(".", ",")  # the bar labels: 1,79 not 1.79
                            for name, p in tokens.sample_premium().items()}


def test_page_does_not_import_torch():
    # A fresh interpreter: other tests in this process may have imported torch already.
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({APP!r}, default_timeout=30); at.run()\n"
        "at.switch_page('app_pages/tokens.py'); at.run()\n"
        "assert not at.exception, at.exception\n"
        "assert at.title[0].value == 'What tokenization costs in Portuguese'\n"
        "print('heavy:', sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "heavy: []" in out.stdout


def test_boxes_that_are_not_one_text_get_a_warning():
    """The sample set's own pairs never trigger it; an English box far shorter than the Portuguese one does."""
    assert all(tokens.length_mismatch(p["en"], p["pt"]) is None for p in tokens.sample_pairs())
    at = open_page()
    assert not at.warning  # the default passage is a translation
    at.text_area(key="tokens_en").set_value("Short.").run()
    (warning,) = at.warning
    pt = at.text_area(key="tokens_pt").value
    ratio = len(pt.strip()) / len("Short.")
    assert "do not look like one text" in warning.value and f"{ratio:.2f}" in warning.value
    at = open_page(lang="pt")
    at.text_area(key="tokens_en").set_value("Short.").run()
    warning = at.warning[0].value
    assert "não parecem o mesmo texto" in warning and f"{ratio:.2f}".replace(".", ",") in warning


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_course_tokenizer_beside_the_others(lang):
    """The fourth encoding is the course models' own: its counts are their Hugging Face tokenizer's, its
    chips keep raw bytes (a single token is the subject here), and the radio names it for what it is."""
    from lab.course.tokenizer import decoder_tokenizer

    tok = decoder_tokenizer()
    at = open_page(lang=lang)
    text = "O troféu não coube na mala."
    at.text_area(key="tokens_pt").input(text).run()
    radio = at.radio(key="tokens_encoding")
    assert list(radio.options)[-1] == {"en": "course models (GPT-2's first 7,935 merges)",
                                       "pt": "modelos do curso (as primeiras 7.935 fusões do GPT-2)"}[lang]
    radio.set_value("course").run()
    assert not at.exception
    ids = tok(text)["input_ids"]
    assert shown_costs(at.table[0])["course"]["tokens"] == str(len(ids)) == "16"
    body = html_views(at)[0].proto.body
    assert body.count('class="tok-chip"') == len(ids)
    chips = body.split("tok-chips", 1)[1].split("</div>")[0].replace("\u00a0", " ")  # a lone byte in words
    assert "byte C3" in chips and "byte A3" in chips and "ã" not in chips and "\\x" not in chips
    words = tokens.words_in_window(tokens.token_costs(text)["course"], 256)
    want = {"en": f"The course models read 256 tokens: about {words} words of this Portuguese text.",
            "pt": f"Os modelos do curso leem 256 tokens: cerca de {words} palavras deste texto."}[lang]
    assert want in at.markdown.values
