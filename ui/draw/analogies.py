"""What the analogies page draws beside its charts (chapter 02): its inputs, declared once, and the notes
on the words; ui.cached.analogies computes.
"""

from __future__ import annotations

import streamlit as st

from lab.embeddings import PRESETS, EmbeddingError
from ui import messages, widgets
from ui.cached import analogies as cached
from ui.i18n import num, t


def load_preset() -> None:
    """Widget callback: fill the words, the expected word and the mean-of-pieces switch from the preset."""
    a, b, c, d, mean = PRESETS[st.session_state["an_preset"]]
    st.session_state.update(an_a=a, an_b=b, an_c=c, an_expected=d, an_mean=mean)


def famous() -> None:
    """Widget callback of the famous-one button: king − man + woman, which the course models cannot answer."""
    st.session_state["an_preset"] = "king"
    load_preset()


def famous_button() -> None:
    """One click to the famous analogy (the page opens on one that holds on the offline model)."""
    st.button(t("The famous one: king − man + woman", "O famoso: king − man + woman"), on_click=famous,
              help=t("The classic of word2vec. On the course models \" queen\" is two tokens, so it cannot come "
                     "out right: the page says why.", "O exemplo clássico dos vetores de palavras. Nos modelos do "
                     "curso \" queen\" tem dois tokens, então não pode dar certo: a página diz por quê."))


def inputs() -> dict[str, widgets.Widget]:
    """Every input of the page by key (its link parameter), declared once and bound now, before any is
    drawn: the preset's callback fills the words and the mean-of-pieces switch, which start at the
    preset's (files − file + user at first: it holds on the offline course model; king − man + woman, which
    cannot, is one click away). The page draws each where it goes."""
    preset = widgets.Choice("an_preset", t("Preset", "Exemplo pronto"), list(PRESETS), "users",
                            format_func=cached.preset_label, on_change=load_preset)
    a, b, c, d, mean = PRESETS[preset.bind()]
    declared = [
        preset,
        widgets.Text("an_a", "A", a, kind="text_input"),
        widgets.Text("an_b", "− B", b, kind="text_input"),
        widgets.Text("an_c", "+ C", c, kind="text_input"),
        widgets.Text("an_expected", t("= expected", "= esperada"), d, kind="text_input"),
        widgets.Choice("an_method", t("Method", "Método"), ["add", "mul"], "add", kind="radio",
                       format_func=cached.method_name, horizontal=True),
        widgets.Toggle("an_exclude", t("Exclude the three inputs", "Excluir as três de entrada"), True),
        widgets.Toggle("an_rare", t("Include rarely trained tokens", "Incluir tokens pouco treinados"), False,
                       help=t("Rows the model barely trained sit near where they started and crowd every cosine "
                              "search; they are left out unless this is on.",
                              "Linhas que o modelo quase não treinou ficam perto de onde começaram e lotam toda busca "
                              "por cosseno; ficam de fora, a menos que isto esteja ligado.")),
        widgets.Toggle("an_space", t("Leading space (\" king\")", "Espaço na frente (\" rei\")"), True),
        widgets.Toggle("an_mean", t("Mean of pieces", "Média dos pedaços"), mean,
                       help=t("A word of several tokens stands for the mean of its pieces: an approximation.",
                              "Uma palavra de vários tokens vira a média dos pedaços: uma aproximação.")),
        widgets.Slider("an_k", t("Results", "Resultados"), 1, 30, 10),
        widgets.Text("an_word", t("Word", "Palavra"), "package", kind="text_input"),
        widgets.Slider("an_nk", t("Neighbours", "Vizinhos"), 1, 30, 10),
    ]
    widgets.bind_all(*declared)
    return {w.key: w for w in declared}


def problem(e: EmbeddingError) -> None:
    """Why the words cannot be used (ui.messages); a word of several tokens and its pieces as plain text."""
    if "pieces" not in e.details:  # an empty box: a hint, not a warning
        st.info(messages.text(e))
        return
    d = e.details
    st.warning(messages.text(e))
    st.text(f"{d['word']!r} → {' + '.join(map(repr, d['pieces']))}")


def expected_note(model_name: str, exp: dict | None) -> None:
    """The verdict on the expected word: holds (rank 1), ranks low, or cannot (several tokens)."""
    if exp is None:
        return
    if exp["rank_all"] is None:
        st.warning(t(f"The expected word is {len(exp['ids'])} tokens on {model_name}: it has no row of its own, "
                     "so this analogy cannot come out right on this model.",
                     f"A palavra esperada tem {len(exp['ids'])} tokens em {model_name}: não tem linha própria, "
                     "então esta analogia não pode dar certo neste modelo."))
        st.text(f"{exp['word'].strip()!r} → {' + '.join(map(repr, exp['pieces']))}")
    elif exp["rank"] is None and exp.get("left_out"):
        st.warning(t(f"On {model_name} the expected word is a rarely trained token, left out of the answers; it "
                     f"ranks {num(exp['rank_all'])} among all tokens, inputs included.",
                     f"Em {model_name} a palavra esperada é um token pouco treinado, deixado de fora das respostas; "
                     f"ela fica em {num(exp['rank_all'])}º lugar entre todos os tokens, com as de entrada."))
    elif exp["rank"] is None:
        st.info(t("The expected word is one of the three inputs, so exclusion removes it.",
                  "A palavra esperada é uma das três de entrada; a exclusão a remove."))
    elif exp["rank"] == 1:
        st.success(t(f"On {model_name} the expected word comes first (with the inputs excluded).",
                     f"Em {model_name} a palavra esperada vem em primeiro (com as de entrada excluídas)."))
    else:
        st.warning(t(f"On {model_name} this analogy does not hold: the expected word ranks {num(exp['rank'])} "
                     "with the inputs excluded.",
                     f"Em {model_name} esta analogia não se confirma: a palavra esperada fica em "
                     f"{num(exp['rank'])}º lugar com as de entrada excluídas."))
