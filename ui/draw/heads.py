"""What the heads page draws for activation patching (chapters 04, 05): the pair's inputs, the two logit
differences, the residual-stream grid (layers x the prompt's tokens) and the heads grid; ui.cached.heads computes.
"""

from __future__ import annotations

import streamlit as st

from lab import heads, patching
from lab.text import visible
from ui import exports, messages, presentation, widgets
from ui.cached import heads as cached
from ui.i18n import lang, num, t
from viz import heads as viz
from viz.format import markdown_literal


def pair_inputs() -> tuple[str, str, str | None, str | None, bool]:
    """The pair: the language's default, or the reader's own two prompts and answers (each answer may be left
    blank: that prompt's own top next token). (clean, corrupted, clean answer, corrupted answer, own)."""
    clean, corrupt, a, b = patching.defaults(lang())
    own = widgets.Choice("heads_pair", t("Prompts", "Prompts"), ["default", "own"], "default", kind="radio",
                         horizontal=True, format_func=lambda s: t("the example", "o exemplo") if s == "default"
                         else t("your own pair", "o seu par")).draw()
    if own != "own":
        return clean, corrupt, a, b, False
    c1, c2 = st.columns(2)
    clean = widgets.Text("heads_clean", t("Clean prompt", "Prompt limpo"), clean, kind="text_input").draw(c1)
    corrupt = widgets.Text("heads_corrupt", t("Corrupted prompt (as many tokens)", "Prompt corrompido (com os "
                                              "mesmos tokens)"), corrupt, kind="text_input").draw(c2)
    a = widgets.Text("heads_clean_answer", t("Clean answer", "Resposta limpa"), a, kind="text_input").draw(c1)
    b = widgets.Text("heads_corrupt_answer", t("Corrupted answer", "Resposta corrompida"), b,
                     kind="text_input").draw(c2)
    return clean, corrupt, a or None, b or None, True


def patch(model_name: str) -> list[str]:
    """The patching section (the page draws it in its "patch" view): inputs, then the two differences and the two
    grids, or the refusal in the reader's language. Returns the command that reproduces it."""
    st.header(t("Patch an activation", "Transplante uma ativação"))
    presentation.explain(t(
        "Run the model on a clean prompt and on a corrupted one that differs in a word. Then run the corrupted "
        "prompt again, with one piece of the clean run written in: how much of the clean answer comes back "
        "(0 = the corrupted run, 1 = the clean run)?",
        "Rode o modelo num prompt limpo e num corrompido que difere numa palavra. Depois rode o corrompido de novo, "
        "com um pedaço da execução limpa escrito no lugar: quanto da resposta limpa volta (0 = a execução "
        "corrompida, 1 = a limpa)?"))
    clean, corrupt, a, b, own = pair_inputs()
    argv = ["heads", "patch", "--json", "--model", model_name, "--lang", lang()]
    if own:
        argv += ["--clean", clean, "--corrupt", corrupt] + ["--clean-answer", a] * bool(a) + [
            "--corrupt-answer", b] * bool(b)
    try:
        r = cached.patch(model_name, clean, corrupt, a, b)
    except heads.HeadsError as e:
        st.warning(messages.text(e))
        return argv
    show(r, clean, corrupt)
    return argv


def show(r: dict, clean: str, corrupt: str) -> None:
    """The two logit differences, then the residual-stream and heads grids of one patching result."""
    if not presentation.on():
        st.caption(t("Clean: ", "Limpo: ") + markdown_literal(clean) + " · " + t("corrupted: ", "corrompido: ")
                   + markdown_literal(corrupt))
    ta, tb = (visible(x) for x in r["answer_texts"])
    a, b = st.columns(2)
    a.metric(t("Logit difference, clean run", "Diferença de logits, execução limpa"), num(r["clean_diff"]))
    b.metric(t("Logit difference, corrupted run", "Diferença de logits, execução corrompida"), num(r["corrupt_diff"]))
    st.text(t(f"logit[{ta}] − logit[{tb}] at the last token", f"logit[{ta}] − logit[{tb}] no último token"))
    words = {"layer": t("layer (its input)", "camada (a entrada)"), "token": t("token patched", "token transplantado"),
             "head": t("head", "cabeça"), "value": t("clean answer back", "resposta limpa de volta")}
    st.subheader(t("The residual stream, layer by layer and token by token",
                   "O fluxo residual, camada a camada e token a token"))
    exports.chart("heads-patch", st, exports.later(viz.patched, viz.patch_frame(r["resid"], r["labels"]),
                                                   names=words, lang=lang()), width="content")
    st.subheader(t("Each head's output at the last token", "A saída de cada cabeça no último token"))
    exports.chart("heads-patch-heads", st, exports.later(viz.grid, viz.grid_frame(r["heads"]), diverging=True,
                                                         names={**words, "layer": t("layer", "camada")},
                                                         lang=lang()), width="content")
    best = heads.best(r["heads"], 1)[0]
    st.caption(t(f"The head that brings most back: layer {best['layer']} head {best['head']} ({num(best['score'])}). "
                 "A row of the first grid is the input of that layer's block: patched at every token, any row would "
                 "give the clean run exactly.",
                 f"A cabeça que mais traz de volta: camada {best['layer']} cabeça {best['head']} "
                 f"({num(best['score'])}). Uma linha da primeira grade é a entrada do bloco daquela camada: "
                 "transplantada em todos os tokens, qualquer linha daria exatamente a execução limpa."))
