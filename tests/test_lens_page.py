"""The logit-lens page under AppTest, in both languages, on tiny random models (no network)."""

import io
import json
from functools import partial

import pyarrow as pa
import torch

from lab.causal import TROPHY
from lab.lens import DEFAULT_TEXT
from tests import pages
from tests.test_models import fake_hub_cache
from viz.lens import GRID_MAX

PAGE = "app_pages/logit_lens.py"


open_page = partial(pages.open_page, PAGE)


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def grid_data(at):
    """The grid chart's cells (the first Vega-Lite chart's dataset) as a DataFrame."""
    chart = at.get("vega_lite_chart")[0]
    return pa.ipc.open_stream(io.BytesIO(chart.proto.datasets[0].data.data)).read_all().to_pandas()


def own_prediction(path, text) -> tuple[list[int], list[str]]:
    """(ids, each position's next-token argmax as the page shows it) from transformers itself, the token's
    bytes decoded by tiktoken's GPT-2 encoding (a partial UTF-8 character as \\xNN, spaces as ␣)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lab.encodings import encoding

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    ids = tok(text)["input_ids"]
    with torch.no_grad():
        best = model(torch.tensor([ids])).logits[0].argmax(-1).tolist()
    gpt2 = encoding("gpt2")
    return ids, [gpt2.decode_single_token_bytes(i).decode("utf-8", "backslashreplace").replace(" ", "␣") for i in best]


def test_lens_page_shows_the_models_own_prediction_and_re_slices_without_a_forward_pass(
        course_standins, tiny_model_dirs, forwards):
    ids, shown = own_prediction(tiny_model_dirs["gpt2"], DEFAULT_TEXT["en"])  # the oracle runs first: its pass counts
    passes = forwards["n"]
    at = open_page()
    assert at.title[0].value == "Logit lens"
    assert forwards["n"] == passes + 1  # the counter is live: one pass for the page
    cells = grid_data(at)
    top = cells[cells["layer"] == 2].sort_values("position")  # the tiny model's 2 blocks: layer 2 is the output
    assert list(top["top"]) == shown[:GRID_MAX]
    assert len(cells) == 3 * min(len(ids), GRID_MAX) and cells["layer"].max() == 2
    assert metrics(at)["Rank at the output"] == "1"
    assert len(at.dataframe[0].value) == 3
    assert at.text[-1].value == "Following: " + shown[-1]
    at.selectbox(key="lens_position").select(3).run()
    assert at.text[-1].value == "Following: " + shown[3] and not at.exception
    assert forwards["n"] == passes + 1  # a position is a view: no new pass
    at.text_input(key="lens_word").set_value("was").run()  # " was", one token
    assert not at.exception and at.text[-1].value == "Following: ␣was" and forwards["n"] == passes + 2
    at.selectbox(key="lens_position").select(5).run()
    assert forwards["n"] == passes + 2


def test_lens_page_window_over_a_long_text(course_standins, forwards):
    at = open_page()
    at.text_area(key="lens_text").set_value("it was " * 20).run()  # 41 tokens
    assert at.slider(key="lens_start").max == 41 - GRID_MAX
    assert at.selectbox(key="lens_position").value == 40  # a new text follows its last token
    passes = forwards["n"]
    at.slider(key="lens_start").set_value(7).run()
    assert not at.exception and forwards["n"] == passes
    cells = grid_data(at)
    assert cells["position"].min() == 7 and cells["position"].max() == 7 + GRID_MAX - 1


def test_lens_page_in_portuguese(course_standins):
    at = open_page(lang="pt")
    assert at.title[0].value == "Lente dos logits"
    assert at.text_area(key="lens_text").value == DEFAULT_TEXT["pt"]
    specs = " ".join(json.dumps(json.loads(c.proto.spec), ensure_ascii=False) for c in at.get("vega_lite_chart"))
    assert '"title": "camada"' in specs and '"title": "posição"' in specs and '"title": "layer"' not in specs
    assert "Ranking na saída" in metrics(at) and "Following" not in " ".join(x.value for x in at.text)
    at.text_input(key="lens_word").set_value("troféu").run()
    assert not at.exception and any("não um" in w.value for w in at.warning)


def test_lens_page_bad_inputs(course_standins, tiny_model_dirs):
    at = open_page()
    at.text_input(key="lens_word").set_value("troféu").run()  # several tokens
    assert not at.exception and any("not one" in w.value for w in at.warning)
    assert at.text[-1].value.startswith("Following: ")  # falls back to the model's own prediction
    at.text_input(key="lens_word").set_value("   ").run()  # blank: the model's own prediction, no warning
    assert not at.exception and not at.warning
    at.text_area(key="lens_text").set_value("   ").run()
    assert not at.exception and len(at.info) >= 1 and not at.get("vega_lite_chart")
    text = "it was " * 60
    from transformers import AutoTokenizer

    n = len(AutoTokenizer.from_pretrained(tiny_model_dirs["gpt2"])(text)["input_ids"])
    at.text_area(key="lens_text").set_value(text).run()  # more tokens than the tiny model's 64
    assert not at.exception and n > 64 and any(f"first 64 of {n}" in w.value for w in at.warning)
    assert at.selectbox(key="lens_position").value == 63
    at.text_area(key="lens_text").set_value("The **trophy** $x$ <b>it</b>").run()
    assert not at.exception and "**" in " ".join(at.selectbox(key="lens_position").options)


def test_lens_page_with_an_encoder_picked_uses_the_course_decoder(course_standins):
    at = open_page(model="course-roberta")
    assert any("needs a decoder" in i.value for i in at.info)
    assert metrics(at)["Rank at the output"] == "1"


def test_lens_page_on_gpt1_says_it_has_no_final_norm(course_standins, tiny_model_dirs):
    fake_hub_cache(course_standins, "openai-community/openai-gpt", tiny_model_dirs["openai-gpt"])
    at = open_page(model="openai-gpt")
    assert any("no final layer norm" in c.value for c in at.caption)
    assert metrics(at)["Rank at the output"] == "1"


def test_lens_page_keeps_its_inputs_across_a_page_switch(course_standins):
    at = open_page()
    at.text_area(key="lens_text").set_value("meu próprio texto 🏆 aqui").run()
    at.selectbox(key="lens_position").select(2).run()
    at.text_input(key="lens_word").set_value("was").run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.text_area(key="lens_text").value == "meu próprio texto 🏆 aqui"
    assert at.selectbox(key="lens_position").value == 2 and at.text_input(key="lens_word").value == "was"


def x_labels(at) -> list[str]:
    """The grid's x-axis labels as Vega draws them: the list its labelExpr indexes."""
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    axis = next(layer["encoding"]["x"]["axis"] for layer in spec["layer"])
    return json.loads(axis["labelExpr"].split("[datum.value")[0])


def test_lens_page_reads_accented_characters_on_the_course_tokenizer(fresh_caches):
    """On the shipped course-gpt2 (no stand-ins) "não" is four tokens, ã two bytes: the grid's axis labels, its
    tooltip's input tokens and the position picker read ã (marked ·1/2, ·2/2), never \\xc3; a window that hides
    tokens says which, quoting them as the tokenizer's own decode writes them."""
    from transformers import AutoTokenizer

    text = TROPHY["pt"][0]  # 25 course tokens: more than one grid
    tok = AutoTokenizer.from_pretrained(pages.APP.rsplit("/", 1)[0] + "/models/course-gpt2")
    ids = tok(text)["input_ids"]
    at = open_page(lang="pt", lens_text=text)
    tags = x_labels(at)
    assert len(tags) == GRID_MAX and any("ã" in x for x in tags) and not any("\\x" in x for x in tags)
    assert [x for x in tags if "ã" in x] == ["6 ã ·1/2", "7 ã ·2/2"]
    assert set(grid_data(at)["input"]) == set(tags)
    options = at.selectbox(key="lens_position").options
    assert "6 ã ·1/2" in options and not any("\\x" in o for o in options)
    note = next(c.value for c in at.caption if c.value.startswith("A grade mostra"))
    hidden = tok.decode(ids[GRID_MAX:])
    assert f"tokens 0–{GRID_MAX - 1} de {len(ids)}" in note and f"os {len(ids) - GRID_MAX} últimos («{hidden}»)" in note
    at.slider(key="lens_start").set_value(len(ids) - GRID_MAX).run()
    note = next(c.value for c in at.caption if c.value.startswith("A grade mostra"))
    start = len(ids) - GRID_MAX
    assert f"os {start} primeiros («{tok.decode(ids[:start])}»)" in note and "últimos" not in note
    assert tok.decode(ids[:start]) == "O troféu não" and not at.exception


def test_the_default_text_shows_whole_on_the_course_model(fresh_caches):
    """The page's default in each language fits one grid on the course model: no window slider, no hidden-token
    note, a column per token; and the page says what its answer does (tests/test_lens.py checks the claim)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(pages.APP.rsplit("/", 1)[0] + "/models/course-gpt2")
    for lang, says in (("en", "reaches rank 1 at a middle floor"), ("pt", "chega ao 1º lugar num andar do meio")):
        at = open_page(lang=lang)
        n = len(tok(DEFAULT_TEXT[lang])["input_ids"])
        assert at.text_area(key="lens_text").value == DEFAULT_TEXT[lang]
        assert not at.slider and len(x_labels(at)) == n and len(grid_data(at)) == 5 * n
        assert not any(c.value.startswith(("The grid shows", "A grade mostra")) for c in at.caption)
        assert any(says in c.value for c in at.caption)
        assert metrics(at)[{"en": "First at rank 1", "pt": "Primeiro no topo"}[lang]] == \
            {"en": "layer 3", "pt": "camada 3"}[lang]


def label_exprs(node) -> list[str]:
    """Every axis labelExpr in a Vega-Lite spec."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "labelExpr"] + [e for v in node.values() for e in label_exprs(v)]
    return [e for v in node for e in label_exprs(v)] if isinstance(node, list) else []


def test_floor_0_is_embeddings_in_the_table_the_metrics_and_both_charts(course_standins):
    for lang, name in (("en", "embeddings"), ("pt", "embeddings")):
        at = open_page(lang=lang, lens_text="it it it it it it")  # the tiny model's guess can settle at floor 0
        table = at.dataframe[0].value
        assert list(table.iloc[:, 0]) == [name, "1", "2"]
        floors = [[e for e in label_exprs(json.loads(c.proto.spec)) if "datum.value == 0" in e]
                  for c in at.get("vega_lite_chart")]
        assert len(floors) == 2 and all(f and all(f'datum.value == 0 ? "{name}"' in e for e in f) for f in floors)
        assert all(v in {"—", name} or v.split()[-1].isdigit()
                   for k, v in metrics(at).items() if k.startswith(("First", "Settled", "Primeiro", "Estável")))
