"""The fossils (chapter 00): GPT-1, GPT-2's four sizes, DistilGPT-2, RoBERTa and the course models side by side."""

import streamlit as st

from lab import fossils
from ui import presentation, widgets
from ui.cached import fossils as cached
from ui.draw import fossils as draw
from ui.draw import reproduce
from ui.i18n import num, t
from ui.presentation import explain

st.title(t("The fossils", "Os fósseis"))
explain(t(
    "The models this course takes apart were not chosen as a list: together they are a cross-section of 2018-2019. "
    "GPT-1 set the recipe, GPT-2 moved the layer norm and scaled it up, RoBERTa trained the other branch (the "
    "encoder) better, DistilGPT-2 made it smaller; the course's own models are the same architecture at toy size. "
    "Every number below is read from a configuration: nothing is downloaded and no model is loaded.",
    "Os modelos que este curso desmonta não foram escolhidos como uma lista: juntos, são um corte de 2018-2019. "
    "O GPT-1 fixou a receita, o GPT-2 mudou a normalização de camada de lugar e cresceu, o RoBERTa treinou "
    "melhor o outro ramo (o encoder), o DistilGPT-2 encolheu; os modelos do próprio curso são a mesma "
    "arquitetura em tamanho de brinquedo. Cada número abaixo sai de uma configuração: nada é baixado e nenhum "
    "modelo é carregado."))
names = list(fossils.BY_NAME)
chosen = widgets.MultiSelect("fos_models", t("Models", "Modelos"), names, names).draw()
chosen = [n for n in names if n in chosen]  # always in lineage order: "what changed" compares with the row above
if not chosen:
    st.info(t("Pick at least one model.", "Escolha pelo menos um modelo."))
    st.stop()
report = cached.report(tuple(chosen))
rows = report["fossils"]
biggest = max(rows, key=lambda r: r["params"]["total"])
c1, c2, c3 = st.columns(3)
c1.metric(t(f"Parameters, {biggest['name']}", f"Parâmetros, {biggest['name']}"), num(biggest["params"]["total"]))
c2.metric(t(f"GFLOPs per token, {biggest['name']}", f"GFLOPs por token, {biggest['name']}"),
          num(biggest["flops_per_token"]["total"] / 1e9, 3))
c3.metric(t("Models", "Modelos"), num(len(rows)))

with presentation.view("shape"):
    st.subheader(t("The shape of each model", "A forma de cada modelo"))
    draw.shape_table(rows)
st.subheader(t("What each one costs", "Quanto cada um custa"))
explain(t("Parameters counted exactly from the configuration (tied embeddings once), split by where they sit. "
          "FLOPs: forward, per token, two per multiply-add, matrix products only, attending to the full context. "
          "The key-value cache stores a key and a value of the model's width per layer and per token; an encoder "
          "reads the whole text at once and keeps none.",
          "Parâmetros contados exatamente a partir da configuração (embeddings amarrados uma vez), separados por "
          "onde ficam. FLOPs: forward, por token, dois por multiplicação-soma, só produtos de matrizes, olhando o "
          "contexto cheio. O cache KV guarda uma chave e um valor da largura do modelo por camada e por token; um "
          "encoder lê o texto todo de uma vez e não guarda nenhum."))
draw.cost_table(rows)
st.subheader(t("A cross-section of history", "Um corte da história"))
draw.history_table(rows)
draw.charts(rows)

st.subheader(t("GPT-2: the paper's figures and the released counts", "GPT-2: os números do artigo e as contagens "
               "lançadas"))
draw.paper_gap(report)
draw.sources(rows)
reproduce.command(["fossils", "--json"] + ([] if chosen == names else [a for n in chosen for a in ("--model", n)]))
