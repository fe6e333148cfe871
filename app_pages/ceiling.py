"""The ceiling of this path: LeCun's compounding-error argument, measured on the course decoders (chapter 16)."""

import streamlit as st

from lab import ceiling
from lab.errors import LabError
from lab.models import registry
from lab.text import encode
from ui import presentation, widgets
from ui.cached import ceiling as cached
from ui.draw import ceiling as draw
from ui.draw import reproduce
from ui.i18n import t
from ui.limits import offered, page_cut
from ui.messages import text as worded
from ui.model_loader import get_model

st.title(t("The ceiling of this path", "O teto deste caminho"))
presentation.explain(t(
    "LeCun's argument against autoregressive models: if each token is wrong with probability e, independently, "
    "an answer of n tokens is right with probability (1 − e)ⁿ, which falls to zero as answers grow. Both parts can "
    "be measured: the per-token error e, and whether errors really are independent.",
    "O argumento de LeCun contra os modelos autorregressivos: se cada token erra com probabilidade e, de forma "
    "independente, uma resposta de n tokens está certa com probabilidade (1 − e)ⁿ, que vai a zero conforme a "
    "resposta cresce. As duas partes dão para medir: o erro por token e, e se os erros são mesmo independentes."))

# Widgets: the text, the models, the longest run; the forced position further down.
unseen = ceiling.unseen_texts()
names = {"unseen:en": t("Debian documentation no course model saw (EN)",
                        "Documentação Debian que nenhum modelo do curso viu (EN)"),
         "unseen:pt": t("Debian documentation no course model saw (PT)",
                        "Documentação Debian que nenhum modelo do curso viu (PT)"), "own": t("Your own text",
                                                                                              "Seu próprio texto")}
source = widgets.Choice("ceil_source", t("Text", "Texto"), list(names), t("unseen:en", "unseen:pt"),
                        format_func=names.get).draw()
own = widgets.Text("ceil_text", t("Your text", "Seu texto"), unseen["en"][:1200], height=140)
if source == "own":
    text = page_cut(own.draw(), cached.PAGE_CHARS, "ceiling")
else:
    text = unseen[source.split(":")[1]][:cached.PAGE_CHARS]
decoders = [n for n in offered(registry.REGISTRY) if registry.info(n).kind == "decoder"]
models = widgets.MultiSelect("ceil_models", t("Models", "Modelos"), decoders,
                             [n for n in cached.COURSE_DECODERS if n in decoders]).draw()
max_n = widgets.Slider("ceil_n", t("Longest run measured (tokens)", "Maior sequência medida (tokens)"), 4, 128,
                       64).draw()
if not text.strip():
    st.info(t("Type a text to measure.", "Digite um texto para medir."))
    st.stop()
if not models:
    st.info(t("Choose at least one model.", "Escolha pelo menos um modelo."))
    st.stop()

# Data: each model's measurement; charts: the curves, the table.
results = []
for name in models:
    try:
        results.append(cached.measured(name, text, max_n))
    except LabError as e:  # a text of one token, a model that cannot be had
        st.warning(f"{name}: {worded(e)}")
if not results:
    st.stop()
with presentation.view("curves"):
    draw.curves(results, max_n)

st.subheader(t("One wrong token, forced", "Um token errado, forçado"))
m = get_model(results[-1]["model"])
n_tokens = min(len(encode(m.tokenizer, text)), m.context)
if n_tokens < 4:  # a position with a token before it and at least one after, and a range for the slider
    st.info(t("The text is too short to force a token into it.", "O texto é curto demais para forçar um token nele."))
else:
    position = widgets.Slider("ceil_pos", t(f"Position of the forced token ({m.name})",
                                            f"Posição do token forçado ({m.name})"), 1, n_tokens - 2,
                              min(40, n_tokens - 2)).draw()
    draw.forced(cached.forced_view(m.name, text, position))

st.subheader(t("The argument on the course models, unseen text", "O argumento nos modelos do curso, texto inédito"))
with st.spinner(t("Measuring the three course decoders…", "Medindo os três decoders do curso…")):
    rows = cached.course_table(max_n)
draw.course_table(rows, max_n)
draw.verdict(ceiling.verdict(rows))
draw.published()
reproduce.command(*[["ceiling", "--json", "--model", r["model"], "--file", "-", "--max-n", str(max_n)]
                    for r in results], stdin=text)  # chapter 15: this view from the shell
