"""The detector: a language model read as an AI-text classifier, and why it must decide nothing (chapter 12)."""

import streamlit as st

from lab.detect import evaluation as detect_eval
from lab.detect import scoring as detect
from lab.errors import LabError
from lab.models import registry
from ui import messages, presentation, widgets
from ui.cached import detect as cached
from ui.draw import detect as draw
from ui.draw import reproduce
from ui.i18n import lang, t
from ui.limits import offered, page_cut
from ui.model_loader import current_decoder
from ui.runs import detect as runs

st.title(t("The detector", "O detector"))
presentation.explain(t(
    "A language model knows how expected each token of a text is. Text it samples greedily is very expected; a "
    "person's is less so. That gap is all an AI-text detector built on a model has. Below, the gap token by token, "
    "then measured on a labelled set the project built: what it catches, and whom it wrongly accuses.",
    "Um modelo de linguagem sabe quão esperado é cada token de um texto. O texto que ele gera de forma gulosa é "
    "muito esperado; o de uma pessoa, menos. Essa diferença é tudo o que um detector de texto de IA feito com um "
    "modelo tem. Abaixo, a diferença token a token, depois medida num conjunto rotulado que o projeto montou: o que "
    "ele pega e quem ele acusa por engano."))
m = current_decoder("The detector", "O detector")

# Widgets: the text, the second model for Binoculars, the GLTR buckets; the score, threshold and prevalence below.
texts = cached.samples(lang())
sample_names = {"own": t("my own text", "meu próprio texto"), "human": t("written by a person (the project)",
                                                                          "escrito por uma pessoa (o projeto)")}
sample_names |= {s: t(f"course-gpt2 continuing it: {draw.group_names()['setting:' + s]}",
                      f"course-gpt2 continuando: {draw.group_names()['setting:' + s]}") for s in cached.SAMPLES[1:]}
with presentation.options():  # folded away on a projector: the verdict below reaches its first screen
    source = widgets.Choice("det_source", t("Text", "Texto"), ["own", *cached.SAMPLES], "human",
                            format_func=sample_names.get).draw()
    own = widgets.Text("det_text", t("Your text", "Seu texto"), texts["human"], height=140)
    text = page_cut(own.draw(), cached.PAGE_CHARS, "detect") if source == "own" else texts[source]
    if source != "own":
        with st.expander(t("Show the text", "Mostrar o texto")):
            st.text(text)
    decoders = [n for n in offered(registry.REGISTRY) if registry.info(n).kind == "decoder" and n != m.name]
    observer = widgets.Choice("det_observer", t("Observer for Binoculars (same tokenizer)",
                                                "Observador para o Binoculars (mesmo tokenizador)"),
                              ["none", *decoders], "course-gpt2-2x128" if m.name == "course-gpt2" else "none",
                              format_func=lambda n: t("none", "nenhum") if n == "none" else n).draw()
    observer = None if observer == "none" else observer
    buckets = cached.BUCKET_CHOICES[widgets.Choice("det_buckets", t("GLTR buckets (ranks)", "Faixas do GLTR (postos)"),
                                                   list(cached.BUCKET_CHOICES), "10/100/1000", kind="pills").draw()]
if not text.strip():
    st.info(t("Type a text to score.", "Digite um texto para avaliar."))
    st.stop()

# Data: this text's tokens and scores, then the evaluation set's scores (shipped for the course pair).
try:  # the buckets colour this text; what is measured (the set, the scores compared with it) keeps GLTR's own
    view, scored = (cached.text_view(m.name, observer, text, b) for b in (buckets, detect.BUCKETS))
    rows = runs.set_rows(m.name, observer, detect.BUCKETS, lambda: st.progress(0.0, text=t(
        "Scoring the evaluation set…", "Avaliando o conjunto de avaliação…")))
except LabError as e:  # bad text, an observer with another tokenizer, a model that cannot be had
    st.warning(messages.text(e))
    st.stop()
verdict = st.container(key="det_verdict")  # presentation mode draws the verdict here, on the first screen
with presentation.view("colours"):
    st.subheader(t("The text, as the model sees it", "O texto, como o modelo o vê"))
    draw.coloured_text(view, buckets)
evaluation = runs.evaluation(rows)  # once per set, shared by every reader
draw.scores_table(scored, evaluation)

with verdict if presentation.on() else st.container(key="det_verdict_below"), presentation.view("verdict"):
    st.subheader(t("A threshold turns a score into a verdict", "Um limiar transforma um escore em veredito"))
    draw.set_note(rows, m.name, observer)
    names = draw.method_names()
    method = widgets.Choice("det_method", t("Score", "Escore"), [k for k in names if k in rows[0]],
                            "fast_detectgpt", format_func=names.get).draw()
    percentile = widgets.Slider("det_threshold", t(
        "Threshold: flag what scores above this percentile of the human texts",
        "Limiar: acusar o que passar deste percentil dos textos humanos"), 1, 99, 95).draw()
    at = runs.at_threshold(rows, method, percentile)  # lab.detect.evaluation's, once per set and choice
    draw.threshold_section(at)  # the rates first: on a projector they are the page's main figure
    draw.distribution(runs.histogram(rows, method), at, detect_eval.flat(scored["scores"])[method])
with presentation.view("base_rate"):
    prevalence = widgets.Slider("det_prevalence", t("Share of machine-written texts in the class (%)",
                                                    "Fração de textos escritos por máquina na turma (%)"), 1, 90,
                                10).draw()
    human_share = detect_eval.base_rate(at["tpr"], at["fpr"], prevalence / 100)
    draw.base_rate(human_share, prevalence / 100)

st.subheader(t("Who gets flagged", "Quem é acusado"))
draw.who_is_flagged(at)
draw.conclusion(evaluation, at, human_share)
with st.expander(t("Every score on the whole set (AUROC)", "Todos os escores no conjunto inteiro (AUROC)")):
    draw.auroc_table(evaluation)
st.subheader(t("Published figures", "Números publicados"))
draw.published()
pair = ["--model", m.name, *(["--observer", observer] if observer else [])]  # chapter 15: this view from the shell
reproduce.command((["detect", "--json", *pair, "--file", "-"], text), (["detect-eval", "--json", "--shipped", *pair,
                  "--method", method, "--percentile", str(percentile), "--prevalence", str(prevalence)], None))
