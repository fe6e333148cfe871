"""The causal mask, on and off, and the trophy experiment beside an encoder (chapters 04 and 11)."""

import streamlit as st

from lab.attention import can_drop_mask
from lab.causal import TROPHY
from lab.models import registry
from ui import exports, presentation, widgets
from ui.draw import attention as draw
from ui.draw import reproduce
from ui.i18n import lang, t
from ui.limits import offered
from ui.model_loader import current_decoder, default_encoder
from viz import attention as viz

st.title(t("The causal mask, on and off", "A máscara causal, ligada e desligada"))
presentation.explain(t(
    "A decoder adds −∞ to every score above the diagonal, so after the softmax each token gives exactly "
    "zero weight to the tokens after it. Remove that one line and you have an encoder. Here the same "
    "model runs with and without it; the shared model itself is never changed.",
    "Um decoder soma −∞ a cada score acima da diagonal; depois do softmax, cada token dá peso exatamente "
    "zero aos tokens seguintes. Tire essa linha e você tem um encoder. Aqui o mesmo modelo roda com e sem "
    "ela; o modelo compartilhado em si nunca é alterado."))
m = current_decoder("The causal mask", "A máscara causal")
words, masks = draw.names(), [True, False] if can_drop_mask(m.model) else [True]  # GPT-1 keeps its mask
text = widgets.Text("mask_text", t("Sentence", "Frase"), TROPHY[lang()][0], kind="text_input").draw()
with presentation.view("mask"):
    if text.strip():
        draw.mask_heatmaps(m, text, masks, words)
    else:  # the trophy experiment below does not need this sentence: it stays
        st.info(t("Type a sentence.", "Digite uma frase."))

st.header(t("The trophy experiment", "O experimento do troféu"))
presentation.explain(t(
    "Change only the adjective at the end. In a decoder, the attention row of the word is computed before "
    "the adjective exists, so it is bit for bit the same (difference exactly 0.0). In an encoder it is not.",
    "Troque só o adjetivo no fim. Num decoder, a linha de atenção da palavra é calculada antes do adjetivo "
    "existir, então é idêntica bit a bit (diferença exatamente 0,0). Num encoder, não."))
a, b, word = draw.trophy_sentences()
encoders = offered([n for n, i in registry.REGISTRY.items() if i.kind == "encoder"])  # the hosted demo: fewer
encoder = widgets.Choice("trophy_encoder", t("Encoder beside it", "Encoder ao lado"), encoders,
                         default_encoder()).draw()
try:
    series, notice = draw.trophy_series(m.name, encoder, a, b, word, masks)
except ValueError as e:  # TrophyError (quotes the sentences), a model that cannot load
    series, notice = {}, None
    draw.problem(e)
with presentation.view("trophy"):
    if notice:
        st.info(notice)
    if series:
        for col, (name, values) in zip(st.columns(len(series)), series.items(), strict=True):
            col.metric(name, viz.diff_text(max(values), lang=lang()),
                       help=t("max |difference| over every layer and head",
                              "máx |diferença| em todas as camadas e cabeças"))
        bars = exports.later(viz.diff_bars, series, t("Max |difference| of the word's attention row, per layer",
                                                      "Máx |diferença| da linha de atenção da palavra, por camada"),
                             names=words, lang=lang())
        exports.chart("mask-difference", st, bars)
reproduce.command(*[["trophy", "--json", "--model", name, "--a", a, "--b", b, "--word", word, *extra]  # chapter 15
                    for name, extra in [(m.name, []), *[(m.name, ["--no-causal"])] * (False in masks),
                                        *[(encoder, [])] * bool(encoder)]])
