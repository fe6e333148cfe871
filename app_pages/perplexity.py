"""Perplexity compared across models, fairly normalised (chapters 06, 08, 09)."""

import streamlit as st

from lab.models import registry
from ui import presentation, widgets
from ui.cached import perplexity as cached
from ui.draw import perplexity as draw
from ui.draw import reproduce
from ui.i18n import model_label, num, t
from ui.limits import keep_offered, offered, page_cut, perplexity_cap

COURSE_DECODERS = ["course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2"]

st.title(t("Perplexity, compared fairly", "Perplexidade, comparada com justiça"))
presentation.explain(t(
    "Perplexity is the exponential of the average surprise per token: how many tokens the model is, on "
    "average, hesitating between. It says what a model learned, but only per token, and models cut text into "
    "tokens differently. So the same total log-likelihood is also given per byte of text and per word.",
    "Perplexidade é a exponencial da surpresa média por token: entre quantos tokens o modelo está, em média, "
    "hesitando. Ela diz o que o modelo aprendeu, mas só por token, e cada modelo corta o texto em tokens de um "
    "jeito. Por isso a mesma log-verossimilhança total aparece também por byte de texto e por palavra."))

# Widgets: the text, the models, the stride.
texts, names = draw.texts()
source = widgets.Choice("ppl_source", t("Text", "Texto"), names, t("unseen:en", "unseen:pt"),  # the reader's language
                        format_func=names.get).draw()
if source == "own":
    own = widgets.Text("ppl_text", t("Your text", "Seu texto"), texts["own"], cap=perplexity_cap, height=160).draw()
    text = page_cut(own, cached.PAGE_CHARS, "perplexity")
else:
    text = draw.passage(texts[source])
labels = {n: model_label(n) for n in registry.REGISTRY}
models = widgets.MultiSelect("ppl_models", t("Models (evaluated one after another)",
                                             "Modelos (avaliados um depois do outro)"),
                             offered(registry.REGISTRY), [n for n in COURSE_DECODERS if n in registry.REGISTRY],
                             known=registry.REGISTRY, format_func=lambda n: f"{n} · {labels[n]}")
models.bind()  # a link may name any model of the registry ...
keep_offered("ppl_models")  # ... and those the hosted demo does not offer are dropped here, with a notice
chosen = models.draw()
fraction = widgets.Choice(
    "ppl_stride", t("Stride, as a share of each model's context",
                    "Passo (stride), como fração do contexto de cada modelo"), cached.STRIDES, 0.5,
    kind="select_slider", format_func=lambda f: f"{num(f)} × " + t("context", "contexto"),
    help=t("The window moves this many tokens at a time; every token is scored once, with at least "
           "context − stride tokens before it once the text is longer than the context.",
           "A janela anda esse tanto de tokens por vez; cada token é avaliado uma vez, com pelo menos "
           "contexto − passo tokens antes dele quando o texto é maior que o contexto.")).draw()
if not text.strip():
    st.info(t("Type or choose a text to measure.", "Digite ou escolha um texto para medir."))
    st.stop()
if not chosen:
    st.info(t("Choose at least one model.", "Escolha pelo menos um modelo."))
    st.stop()

# Data: each model's evaluation (stored once per process), then the charts.
results = draw.results(chosen, text, fraction)
if not results:
    st.stop()
headers = draw.headers()
with presentation.view("table"):
    draw.table(results, labels, headers)
    draw.quoted_beside(results)  # gpt2 measured: the paper's figure beside it
draw.scale(results)
with presentation.view("surprisal"):
    draw.surprisal(text, results, fraction)
draw.published(headers["model"])
reproduce.command(*[["perplexity", "--json", "--model", r["model"], "--file", "-", "--stride",  # chapter 15
                     str(max(1, int(registry.info(r["model"]).context * fraction)))] for r in results], stdin=text)
