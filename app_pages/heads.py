"""Heads at work: the model copies (induction heads), a head knocked out, an activation patched (chapters 04, 05)."""

import streamlit as st

from lab import heads
from ui import exports, messages, presentation, widgets
from ui.cached import heads as cached
from ui.draw import heads as patching
from ui.draw import reproduce
from ui.i18n import lang, num, t
from ui.limits import offered
from ui.model_loader import current_decoder
from viz import heads as viz

st.title(t("Heads at work", "Cabeças em ação"))
presentation.explain(t(
    "Write a random run of tokens twice. The first time the model can only guess; the second time a model with "
    "an induction head finds where the current token appeared before and copies what came after it. Then knock "
    "heads out, one by one, and see what the loss loses.",
    "Escreva uma sequência aleatória de tokens duas vezes. Na primeira o modelo só pode chutar; na segunda, um "
    "modelo com uma cabeça de indução acha onde o token atual apareceu antes e copia o que veio depois dele. "
    "Depois desligue cabeças, uma a uma, e veja o quanto a perda piora."))
m = current_decoder("The heads experiments", "Os experimentos com cabeças")
words = {"layer": t("layer", "camada"), "head": t("head", "cabeça"), "position": t("position", "posição"),
         "loss": t("loss (bits)", "perda (bits)"), "copy": t("copy", "cópia"), "first": t("first copy", "1ª cópia"),
         "second": t("second copy", "2ª cópia"), "text": t("your text", "seu texto")}
c1, c2, c3 = st.columns(3)
source = widgets.Choice("heads_source", t("Sequence", "Sequência"), ["repeated", "own"], "repeated", kind="radio",
                        format_func=lambda s: t("random, repeated", "aleatória, repetida") if s == "repeated"
                        else t("your own text", "seu próprio texto")).draw(c1)
length = widgets.Slider("heads_length", t("Tokens per copy", "Tokens por cópia"), 4, 60, heads.LENGTH).draw(c2)
seed = widgets.NumberInput("heads_seed", t("Seed", "Semente"), 0, 10_000, heads.SEED).draw(c3)
text = None
if source == "own":
    text = widgets.Text("heads_text", t("Text", "Texto"), t("The cat sat on the mat. The cat sat on the mat.",
                                                        "O gato subiu no muro. O gato subiu no muro."),
                        height=80).draw()
try:
    r = cached.copying(m.name, text, int(length), int(seed))
except heads.HeadsError as e:
    st.warning(messages.text(e))
    st.stop()
induction, grid_names = r.get("induction"), {**words, "value": t("score", "pontuação")}
with presentation.view("copy"):
    st.subheader(t("The loss, token by token", "A perda, token a token"))
    if not r["own"]:
        a, b = st.columns(2)
        a.metric(t("First copy", "Primeira cópia"), f"{num(r['first_half'])} bits")
        b.metric(t("Second copy", "Segunda cópia"), f"{num(r['second_half'])} bits",
                 delta=f"{num(r['second_half'] - r['first_half'])} bits", delta_color="inverse")
    exports.chart("heads-loss", st, exports.later(viz.losses, viz.loss_frame(r["loss"], r["length"], words),
                                                  names=words, lang=lang()))
    shown = widgets.Choice("heads_score", t("Score per head", "Pontuação por cabeça"),
                           ["induction", "previous"] if induction is not None else ["previous"],
                           "induction" if induction is not None else "previous", kind="pills",
                           format_func=lambda s: t("induction", "indução") if s == "induction"
                           else t("previous token", "token anterior")).draw()
    exports.chart("heads-scores", st, exports.later(viz.grid, viz.grid_frame(r[shown]), names=grid_names,
                                                    lang=lang()), width="content")
    for key, en, pt in (("induction", "Best induction heads", "Melhores cabeças de indução"),
                        ("previous", "Best previous-token heads", "Melhores cabeças de token anterior")):
        if r.get(key) is not None:
            best = ", ".join(t(f"layer {b['layer']} head {b['head']}", f"camada {b['layer']} cabeça {b['head']}")
                             + f" ({num(b['score'])})" for b in heads.best(r[key]))
            st.markdown(f"**{t(en, pt)}:** {best}")
    table = {t("induction", "indução"): induction, t("previous token", "token anterior"): r["previous"]}
    frame = viz.table({k: v for k, v in table.items() if v is not None}, words)
    for column in (c for c in table if c in frame):  # the reader's decimal mark (two decimals: sorts as numbers)
        frame[column] = frame[column].map(num)
    st.dataframe(frame, hide_index=True, height=240)
st.caption(t("Induction score: the mean attention from each token of the second copy to the token that followed "
             "its first occurrence. Previous-token score: the mean attention to the token just before. Both read "
             "the model's own attention weights.",
             "Pontuação de indução: a atenção média de cada token da segunda cópia ao token que veio depois da "
             "primeira ocorrência dele. Token anterior: a atenção média ao token logo antes. As duas leem os pesos "
             "de atenção do próprio modelo."))

st.subheader(t("One, two and four layers", "Uma, duas e quatro camadas"))
family = offered(["course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2"])
rows = cached.family(tuple(family), int(length), int(seed))
st.dataframe([{t("model", "modelo"): f["model"], t("layers", "camadas"): f["layers"],
               t("first copy (bits)", "1ª cópia (bits)"): num(f["first"]),
               t("second copy (bits)", "2ª cópia (bits)"): num(f["second"]),
               t("best induction", "melhor indução"): num(f["induction"])} for f in rows], hide_index=True)
st.caption(t("What Olsson et al. (2022) predict: an induction head needs a previous-token head in an earlier layer, "
             "so one layer cannot copy. Measured here, on this sequence: ",
             "O que Olsson et al. (2022) preveem: uma cabeça de indução precisa de uma cabeça de token anterior "
             "numa camada antes, então uma camada só não copia. Medido aqui, nesta sequência: ")
           + "; ".join(t(f"{f['layers']} layer(s), {num(f['first'] - f['second'])} bits less on the second copy, best "
                         f"induction score {num(f['induction'])}",
                         f"{f['layers']} camada(s), {num(f['first'] - f['second'])} bits a menos na segunda cópia, "
                         f"melhor indução {num(f['induction'])}") for f in rows) + ".")

st.header(t("Knock a head out", "Desligue uma cabeça"))
options = [f"{layer}.{head}" for layer in range(m.n_layer) for head in range(m.n_head)]
k1, k2 = st.columns([3, 1])
chosen = widgets.MultiSelect("heads_knock", t("Heads to knock out", "Cabeças a desligar"), options, [],
                             format_func=lambda o: t("layer {} · head {}", "camada {} · cabeça {}").format(
                                 *o.split("."))).draw(k1)
mode = widgets.Choice("heads_mode", t("Replace by", "Substituir por"), list(heads.MODES), "zero", kind="radio",
                      format_func=lambda s: t("zeros", "zeros") if s == "zero"
                      else t("its mean over the text", "a média no texto")).draw(k2)
k = cached.knockout(m.name, tuple(r["ids"]), tuple(heads.parse_heads(",".join(chosen))), mode)
with presentation.view("knockout"):
    st.metric(t("Loss with these heads out", "Perda sem essas cabeças"), f"{num(k['knocked'].mean())} bits",
              delta=f"{num(k['mean_delta'])} bits", delta_color="inverse")
    st.caption(t("Each head knocked out alone: how much the mean loss grows (bits per token).",
                 "Cada cabeça desligada sozinha: quanto a perda média cresce (bits por token)."))
    exports.chart("heads-knockout", st, exports.later(viz.grid, viz.grid_frame(k["grid"]), diverging=True,
                  names={**words, "value": t("loss change (bits)", "mudança da perda (bits)")}, lang=lang()),
                  width="content")
with presentation.view("patch"):
    patched = patching.patch(m.name)
own = ["--text", text] if text is not None else ["--length", str(int(length)), "--seed", str(int(seed))]
reproduce.command(["heads", "copy", "--json", "--model", m.name, *own],
                  ["heads", "knockout", "--json", "--model", m.name, *own, "--heads", ",".join(chosen) or "",
                   "--mode", mode, "--grid"], patched)
