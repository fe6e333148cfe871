"""GPT-2's code beside the tensors it makes: one forward pass, line by line, live, with the KV cache (chapter 13)."""

import streamlit as st

from lab import models, trace
from lab.errors import LabError
from ui import presentation, widgets
from ui.cached import code as cached
from ui.draw import code as draw
from ui.draw import reproduce
from ui.i18n import num, t
from ui.messages import text as worded
from ui.model_loader import current_model, get_model

st.title(t("GPT-2's code beside its tensors", "O código do GPT-2 ao lado dos tensores"))
presentation.explain(t(
    "GPT-2's forward pass fits in about a hundred lines. Here it is, written in plain torch with the names of "
    "OpenAI's original file, running on the model's own weights: pick a step and see the tensor that line makes "
    "for your text. Its logits are checked against transformers' on every run.",
    "O forward do GPT-2 cabe em umas cem linhas. Aqui está ele, escrito em torch puro com os nomes do arquivo "
    "original da OpenAI, rodando sobre os pesos do próprio modelo: escolha um passo e veja o tensor que aquela "
    "linha produz para o seu texto. Os logits são conferidos com os do transformers a cada execução."))

# Widgets: the model (a GPT-2), the text, the layer and head kept, the step shown.
m = current_model()
try:
    trace.check(m)
except LabError as e:
    st.info(t(f"{worded(e)} Using the course's GPT-2, {models.DEFAULT_OFFLINE}.",
              f"{worded(e)} Usando o GPT-2 do curso, {models.DEFAULT_OFFLINE}."))
    m = get_model(models.DEFAULT_OFFLINE)
cfg = m.model.config
text = widgets.Text("code_text", t("Text", "Texto"), t("The package manager installs the package and its "
                                                       "dependencies.", "O gerenciador de pacotes instala o pacote "
                                                       "e as suas dependências."), height=80).draw()
left, right = st.columns(2)
layer = widgets.Choice("code_layer", t("Layer", "Camada"), range(cfg.n_layer), 0).draw(left)
head = widgets.Choice("code_head", t("Head", "Cabeça"), range(cfg.n_head), 0).draw(right)
step = widgets.Choice("code_step", t("Step of the pass", "Passo do forward"), list(cached.steps()), "attn.weights",
                      kind="select_slider").draw()
if not text.strip():
    st.info(t("Type a text to run the code on.", "Digite um texto para rodar o código."))
    st.stop()

# Data: one recorded pass; charts: the source and the step's tensor side by side.
try:
    result = cached.traced(m.name, text, layer, head)
except LabError as e:
    st.error(worded(e))
    st.stop()
if result["cut"]:
    st.caption(t(f"The page runs the text's first {cached.PAGE_TOKENS} tokens ({num(result['cut'])} left out); "
                 "`python -m lab trace` takes a whole context.",
                 f"A página roda os primeiros {cached.PAGE_TOKENS} tokens do texto ({num(result['cut'])} ficaram "
                 "de fora); `python -m lab trace` aceita um contexto inteiro."))
with presentation.stacking("code"):
    code_col, tensor_col = st.columns(2)
with code_col:
    draw.source(step)
with tensor_col, presentation.view("tensor"):
    draw.tensor(result["steps"][step], result["labels"], step, head)
draw.top(result)

st.subheader(t("The key-value cache, measured", "O cache de chaves e valores, medido"))
presentation.explain(t(
    f"The model writes {cached.KV_NEW} more tokens, greedily. Each step runs twice: one new token through `past` "
    "(the keys and values of every earlier token, kept), and the whole sequence again. present grows by one token "
    "per step; the logits of both ways agree.",
    f"O modelo escreve mais {cached.KV_NEW} tokens, sempre o mais provável. Cada passo roda duas vezes: um token "
    "novo passando por `past` (as chaves e valores de todos os tokens anteriores, guardados) e a sequência toda de "
    "novo. present cresce um token por passo; os logits dos dois jeitos concordam."))
draw.kv_section(cached.kv(m.name, text))

st.subheader(t("GPT-2's original file, function by function", "O arquivo original do GPT-2, função por função"))
draw.mapping()
reproduce.command(["trace", "--json", "--model", m.name, "--text", text, "--layer", str(layer), "--head",
                   str(head)])  # chapter 15: this view from the shell
