"""The causal mask, on and off, and the trophy experiment beside an encoder (chapters 04 and 11)."""

import streamlit as st

from lab import models, registry
from lab.attention import can_drop_mask
from lab.causal import TROPHY
from lab.text import labels
from ui import attention_data as data
from ui import exports, presentation
from ui import url_state as link
from ui.i18n import lang, t
from ui.limits import cap_text, offered
from ui.model_loader import current_model, get_model
from viz import attention as viz


def mask_section(m, text: str, masks: list[bool], words: dict) -> None:
    """The sentence's scores and weights with the mask and without it (`masks`), and the loss each gives."""
    link.bind("mask_layer", 0, link.integer(0, m.n_layer - 1))  # ranges of the model just loaded
    link.bind("mask_head", 0, link.integer(0, m.n_head - 1))
    c1, c2 = st.columns(2)
    layer = c1.selectbox(t("Layer", "Camada"), range(m.n_layer), key="mask_layer")
    head = c2.selectbox(t("Head", "Cabeça"), range(m.n_head), key="mask_head")
    views = {on: data.mask_view(m.name, text, on) for on in masks}
    if False not in views:  # GPT-1's mask is built into every layer
        st.warning(t(f"Without the mask: not available for {m.name}, which builds its causal mask into every "
                     "attention layer; removing it would mean changing the shared model, which this app never does.",
                     f"Sem a máscara: indisponível para {m.name}, que embute a máscara causal em cada camada de "
                     "atenção; tirá-la exigiria alterar o modelo compartilhado, o que este app nunca faz."))
    if views[True]["n_total"] > viz.HEATMAP_MAX:
        st.caption(t(f"Showing the first {viz.HEATMAP_MAX} tokens.", f"Mostrando os primeiros {viz.HEATMAP_MAX} tokens."))
    for on, v in views.items():
        st.subheader(t("With the causal mask", "Com a máscara causal") if on else t("Without the mask", "Sem a máscara"))
        left, right = presentation.stacking(f"causal-{on}").columns(2)
        exports.chart(f"scores-{'masked' if on else 'unmasked'}", left, viz.heatmap(v["scores"][layer, head], labels(v["tokens"]), t("Scores q·k/√d (before softmax)",
                          "Scores q·k/√d (antes do softmax)"), value_title="score", scheme="purpleorange", digits=1, names=words,
                          lang=lang()))
        exports.chart(f"weights-{'masked' if on else 'unmasked'}", right, viz.heatmap(v["attention"][layer, head], labels(v["tokens"]), t("Weights (after softmax)",
                           "Pesos (depois do softmax)"), names=words, lang=lang()))
    data.loss_without_mask(views)


st.title(t("The causal mask, on and off", "A máscara causal, ligada e desligada"))
presentation.explain(t("A decoder adds −∞ to every score above the diagonal, so after the softmax each token gives exactly "
           "zero weight to the tokens after it. Remove that one line and you have an encoder. Here the same "
           "model runs with and without it; the shared model itself is never changed.",
           "Um decoder soma −∞ a cada score acima da diagonal; depois do softmax, cada token dá peso exatamente "
           "zero aos tokens seguintes. Tire essa linha e você tem um encoder. Aqui o mesmo modelo roda com e sem "
           "ela; o modelo compartilhado em si nunca é alterado."))
m = current_model()
if m.kind != "decoder":
    st.info(t(f"{m.name} is an encoder: it has no causal mask. Using the course decoder, {models.DEFAULT_OFFLINE}.",
              f"{m.name} é um encoder: não tem máscara causal. Usando o decoder do curso, {models.DEFAULT_OFFLINE}."))
    m = get_model(models.DEFAULT_OFFLINE)
words, masks = data.names(), [True, False] if can_drop_mask(m.model) else [True]  # GPT-1 keeps its mask
link.bind("mask_text", TROPHY[lang()][0], link.text())
text = st.text_input(t("Sentence", "Frase"), key="mask_text", max_chars=cap_text("mask_text"))
if text.strip():
    mask_section(m, text, masks, words)
else:  # the trophy experiment below does not need this sentence: it stays
    st.info(t("Type a sentence.", "Digite uma frase."))

st.header(t("The trophy experiment", "O experimento do troféu"))
presentation.explain(t("Change only the adjective at the end. In a decoder, the attention row of the word is computed before "
           "the adjective exists, so it is bit for bit the same (difference exactly 0.0). In an encoder it is not.",
           "Troque só o adjetivo no fim. Num decoder, a linha de atenção da palavra é calculada antes do adjetivo "
           "existir, então é idêntica bit a bit (diferença exatamente 0,0). Num encoder, não."))
data.pair_picker()
c1, c2, c3 = st.columns([5, 5, 1])
a, b = c1.text_input("A", key="trophy_a", max_chars=cap_text("trophy_a")), c2.text_input(
    "B", key="trophy_b", max_chars=cap_text("trophy_b"))
word = c3.text_input(t("Word", "Palavra"), key="trophy_word", max_chars=cap_text("trophy_word"))
encoders = offered([n for n, i in registry.REGISTRY.items() if i.kind == "encoder"])  # the hosted demo: fewer
link.bind("trophy_encoder", data.default_encoder(), link.choice(encoders))
encoder = st.selectbox(t("Encoder beside it", "Encoder ao lado"), encoders, key="trophy_encoder")
try:
    series = data.trophy_series(m.name, encoder, a, b, word, masks)
except ValueError as e:  # TrophyError (quotes the sentences), a model that cannot load
    series = {}
    data.show_problem(e)
if series:
    for col, (name, values) in zip(st.columns(len(series)), series.items(), strict=True):
        col.metric(name, viz.diff_text(max(values), lang=lang()), help=t("max |difference| over every layer and head",
                                                     "máx |diferença| em todas as camadas e cabeças"))
    exports.chart("mask-difference", st, viz.diff_bars(series, t("Max |difference| of the word's attention row, per layer",
                                            "Máx |diferença| da linha de atenção da palavra, por camada"), names=words,
                                  lang=lang()))
