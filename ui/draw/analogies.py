"""What the analogies page draws beside its charts (chapter 02): its inputs, declared once, and the notes
on the words, the tables' and charts' words; ui.cached.analogies computes.
"""

from __future__ import annotations

import streamlit as st

from lab import embeddings
from lab.embeddings import PRESET_LANGUAGES, PRESETS, EmbeddingError
from ui import messages, widgets
from ui.i18n import lang, num, t
from viz.format import number


def load_preset() -> None:
    """Widget callback: fill the words, the expected word and the mean-of-pieces switch from the preset."""
    a, b, c, d, mean = PRESETS[st.session_state["an_preset"]]
    st.session_state.update(an_a=a, an_b=b, an_c=c, an_expected=d, an_mean=mean)


def famous() -> None:
    """Widget callback of the famous-one button: king − man + woman, which the course models cannot answer."""
    st.session_state["an_preset"] = "king"
    load_preset()


def famous_button(where=st) -> None:
    """One click to the famous analogy (the page opens on one that holds on the offline model), in `where`."""
    where.button(t("The famous one: king − man + woman", "O famoso: king − man + woman"), on_click=famous,
              help=t("The classic of word2vec. On the course models \" queen\" is two tokens, so it cannot come "
                     "out right: the page says why.", "O exemplo clássico dos vetores de palavras. Nos modelos do "
                     "curso \" queen\" tem dois tokens, então não pode dar certo: a página diz por quê."))


def inputs() -> dict[str, widgets.Widget]:
    """Every input of the page by key (its link parameter), declared once and bound now, before any is
    drawn: the preset's callback fills the words and the mean-of-pieces switch, which start at the
    preset's (files − file + user at first: it holds on the offline course model; king − man + woman, which
    cannot, is one click away). The page draws each where it goes."""
    preset = widgets.Choice("an_preset", t("Preset", "Exemplo pronto"), list(PRESETS), "users",
                            format_func=preset_label, on_change=load_preset)
    a, b, c, d, mean = PRESETS[preset.bind()]
    declared = [
        preset,
        widgets.Text("an_a", "A", a, kind="text_input"),
        widgets.Text("an_b", "− B", b, kind="text_input"),
        widgets.Text("an_c", "+ C", c, kind="text_input"),
        widgets.Text("an_expected", t("= expected", "= esperada"), d, kind="text_input"),
        widgets.Choice("an_method", t("Method", "Método"), ["add", "mul"], "add", kind="radio",
                       format_func=method_name, horizontal=True),
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


def left_out_text(left: dict, model_name: str) -> str | None:
    """How many rows were left out as rarely trained and by what rule; None when none were."""
    n = num(left["count"])
    if left["method"] == "counts":
        least = num(left["min_count"])
        return t(f"{n} tokens left out (seen fewer than {least} times in training).",
                 f"{n} tokens deixados de fora (vistos menos de {least} vezes no treino).")
    if left["method"] == "indicator":
        return t(f"{n} tokens left out: {model_name} ships no training counts, so they were flagged as under-trained "
                 "from the weights alone (Land & Bartolo 2024, \"Fishing for Magikarp\"). A heuristic: it can miss "
                 "rarely trained rows and flag others.",
                 f"{n} tokens deixados de fora: {model_name} não traz as contagens do treino, então foram marcados "
                 "como mal treinados só pelos pesos (Land & Bartolo 2024, \"Fishing for Magikarp\"). Uma heurística: "
                 "pode deixar passar linhas pouco treinadas e marcar outras.")
    return None


def preset_label(key: str) -> str:
    """A preset as the selectbox shows it, with its language and what it does on the course models (measured:
    lab.embeddings.PRESET_VERDICTS): "king − man + woman → queen · English · cannot hold on the course models"."""
    a, b, c, d, mean = PRESETS[key]
    langs = {"en": t("English", "inglês"), "pt": t("Portuguese", "português"),
             "pt-en": t("Portuguese ↔ English", "português ↔ inglês")}
    verdicts = {"holds": t("holds on both course models", "vale nos dois modelos do curso"),
                "fails": t("does not hold on the course models", "não se confirma nos modelos do curso"),
                "refused": t("cannot hold on the course models (a word is several tokens)",
                             "não pode dar certo nos modelos do curso (uma palavra tem vários tokens)")}
    mean_note = t(", mean of pieces", ", média dos pedaços") if mean else ""
    return f"{a} − {b} + {c} → {d}  · {langs[PRESET_LANGUAGES[key]]} · {verdicts[embeddings.verdict(key)]}{mean_note}"


def tokens_table(query: dict):
    """How each word was looked up: the word, how many tokens, their ids and pieces (plain table)."""
    import pandas as pd

    from viz.embeddings import visible

    return pd.DataFrame({t("word", "palavra"): query["words"],
                         t("tokens", "tokens"): [len(i) for i in query["tokens"]],
                         "ids": [" ".join(map(str, i)) for i in query["tokens"]],
                         t("pieces", "pedaços"): [" + ".join(visible(p) for p in ps) for ps in query["pieces"]]})


def rank_text(r: int | None) -> str:
    """A rank for a metric: 1st as "1", none as "—"."""
    return "—" if r is None else num(r)


def chart_names() -> dict:
    """viz.embeddings.NAMES in the UI language."""
    return {"rank": t("rank", "posição"), "token": "token", "score": t("score", "pontuação"),
            "role": t("role", "papel"), "result": t("result", "resultado"), "expected": t("expected", "esperada"),
            "target": "a − b + c"}


def kept_text(pic: dict) -> str:
    """The share of variance the two axes keep, as the chart's subtitle."""
    share = number(100 * pic["kept"], lang(), 1)
    n = len(pic["points"])
    return t(f"These two axes keep {share}% of the variance of the {n} points drawn: the rest is not shown.",
             f"Estes dois eixos guardam {share}% da variância dos {n} pontos desenhados: o resto não aparece.")


def method_name(method: str) -> str:
    """The radio's label for a method."""
    return {"add": "3CosAdd (a − b + c)", "mul": "3CosMul"}[method]


def commands(model: str, values: dict) -> list[list[str]]:
    """Chapter 15: the `analogy` and `neighbours` commands for the page's inputs (values: the widgets' by key);
    the words after `--`, so a word that starts with a dash stays a word."""
    v = values
    flags = [*([] if v["an_space"] else ["--no-space"]), *(["--mean-pieces"] if v["an_mean"] else []),
             *(["--all-tokens"] if v["an_rare"] else [])]
    analogy = ["analogy", "--json", "--model", model, "--k", str(v["an_k"]), "--method", v["an_method"], *flags,
               *([] if v["an_exclude"] else ["--no-exclude"]),
               *(["--expected", v["an_expected"]] if v["an_expected"].strip() else []), "--", v["an_a"], v["an_b"],
               v["an_c"]]
    return [analogy, ["neighbours", "--json", "--model", model, "--k", str(v["an_nk"]), *flags, "--", v["an_word"]]]
