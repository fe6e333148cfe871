"""What the ceiling page draws (chapter 16): the curves, the per-model table, the course models' table per
language, the forced-error experiment, the sentence computed from the numbers, the published context.
ui.cached.ceiling computes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import exports
from ui.cached import ceiling as cached
from ui.i18n import lang, num, t
from viz import ceiling as viz


def pct(x: float | None) -> str:
    return "—" if x is None else f"{num(100 * x, 1)} %"


def tokens(n: int) -> str:
    """"1 token", "2 tokens" (the same words in Portuguese)."""
    return f"{num(n)} token" if n == 1 else f"{num(n)} tokens"


def half(n: int | None, max_n: int) -> str:
    return t(f"beyond {max_n}", f"além de {max_n}") if n is None else num(n)


def curves(results: list[dict], max_n: int) -> None:
    """Observed against (1 - e)^n for every model, and the table of e, half-lives and conditional rates."""
    observed, predicted = t("observed", "observado"), "(1 − e)ⁿ"
    exports.chart("ceiling-curves", st, exports.later(viz.curve_chart,
        viz.curve_frame(results, observed, predicted),
        t("Chance that n predictions in a row are right", "Chance de n previsões seguidas estarem certas"),
        t("n (tokens in a row)", "n (tokens seguidos)"),
        t("share of start positions (log scale)", "fração das posições (escala log)"), lang(), max_n))
    rows = [{t("model", "modelo"): r["model"], t("tokens", "tokens"): num(r["tokens"]), "e": num(r["e"], 3),
             t("n at one half, observed", "n na metade, observado"): half(r["half_observed"], max_n),
             t("n at one half, (1 − e)ⁿ", "n na metade, (1 − e)ⁿ"): half(r["half_predicted"], max_n),
             t("error after an error", "erro depois de um erro"): pct(r["after_error"]),
             t("error after a right token", "erro depois de um acerto"): pct(r["after_correct"])} for r in results]
    st.dataframe(frame := pd.DataFrame(rows), hide_index=True)
    exports.table("ceiling", st, frame)


def course_table(rows: list[dict], max_n: int) -> None:
    """The three course decoders on unseen documentation, per language."""
    shown = [{t("model", "modelo"): r["model"], t("language", "idioma"): r["lang"].upper(), "e": num(r["e"], 3),
              t("n at one half, observed", "n na metade, observado"): half(r["half_observed"], max_n),
              t("n at one half, (1 − e)ⁿ", "n na metade, (1 − e)ⁿ"): half(r["half_predicted"], max_n),
              t("error after an error", "erro depois de um erro"): pct(r["after_error"]),
              t("error after a right token", "erro depois de um acerto"): pct(r["after_correct"]),
              t(f"error in the {cached.K} tokens after a forced wrong one", f"erro nos {cached.K} tokens depois de "
                "um errado forçado"): pct(r["forced_with"]),
              t("same tokens, nothing forced", "mesmos tokens, nada forçado"): pct(r["forced_without"])}
             for r in rows]
    st.dataframe(frame := pd.DataFrame(shown), hide_index=True)
    exports.table("ceiling-course", st, frame)


def forced(view: dict) -> None:
    """The forced-error experiment at one position: the next tokens without and with the forced token."""
    words = {"forced": t("the forced token: the one the model ranked last here", "o token forçado: o último na "
                         "lista do modelo aqui"), "original": t("the text's own token", "o token do próprio texto"),
             "right": t("top-1 prediction right", "previsão top-1 certa"),
             "wrong": t("top-1 prediction wrong", "previsão top-1 errada")}
    p, k = view["position"], len(view["with"])
    st.markdown(t(f"**Without** (the text as written, next {k} tokens: {sum(not x for x in view['without'])} wrong)",
                  f"**Sem** (o texto como está, próximos {k} tokens: {sum(not x for x in view['without'])} errados)"))
    st.html(viz.forced_html(view["runs"], p, view["without"], None, words))
    st.markdown(t(f"**With** a wrong token forced in ({sum(not x for x in view['with'])} wrong)",
                  f"**Com** um token errado forçado ({sum(not x for x in view['with'])} errados)"))
    st.html(viz.forced_html(view["runs"], p, view["with"], view["forced_text"], words))


def verdict(v: dict) -> None:
    """Where the simple argument holds on these models and where it does not: every clause chosen by
    lab.ceiling.verdict's numbers (`python -m lab ceiling --course` prints them)."""
    best, ratio, first, lift = v["best"], v["error_ratio"], v["forced_first_points"], v["forced_points"]
    span = f"{num(ratio['min'], 2)}–{num(ratio['max'], 2)}"
    falls = v["falls_with_size"]
    trend = t("falls with size" if falls else "does not fall steadily with size",
              "cai com o tamanho" if falls else "não cai de forma constante com o tamanho")
    dep = {"clusters": t(f"errors cluster: after an error the next token is wrong {span} times as often as after a "
                         "right one", f"os erros se agrupam: depois de um erro o próximo token erra {span} vezes mais "
                         "do que depois de um acerto"),
           "recovers": t(f"an error is followed by fewer errors than a right token ({span} times as often)",
                         f"um erro é seguido de menos erros do que um acerto ({span} vezes)"),
           "none": t(f"no consistent dependence ({span})", f"nenhuma dependência consistente ({span})")}
    dep = dep[v["dependence"]]
    beats, pairs = v["runs_of_4_above"], v["pairs"]
    st.success(t(
        f"The per-token error e {trend} (lowest: {best['model']} in {best['lang'].upper()}, "
        f"e = {num(best['e'], 2)}), and with e that high even the best curve falls below one half after "
        f"{tokens(best['half_observed'] or 0)}. Independence, the argument's second part: {dep}; runs of 4 right "
        f"tokens are more frequent than (1 − e)⁴ in {beats} of {pairs} model–language pairs. A wrong token forced "
        f"into the context raises the error of the very next token by {num(first['min'], 0)}–{num(first['max'], 0)} "
        f"points, and of the next {cached.K} tokens on average by {num(lift['min'], 1)}–{num(lift['max'], 1)} points.",
        f"O erro por token e {trend} (o menor: {best['model']} em {best['lang'].upper()}, "
        f"e = {num(best['e'], 2)}), e com e tão alto até a melhor curva cai abaixo da metade depois de "
        f"{tokens(best['half_observed'] or 0)}. A independência, a segunda parte do argumento: {dep}; sequências "
        f"de 4 tokens certos são mais frequentes do que (1 − e)⁴ em {beats} de {pairs} pares modelo–idioma. Um "
        f"token errado forçado no contexto aumenta o erro do token seguinte em {num(first['min'], 0)}–"
        f"{num(first['max'], 0)} pontos, e o dos {cached.K} tokens seguintes em média em {num(lift['min'], 1)}–"
        f"{num(lift['max'], 1)} pontos."))


def published() -> None:
    """The published context, cited, not quoted."""
    st.subheader(t("Published context", "Contexto publicado"))
    st.markdown(t(
        "- **LeCun (2023)**, slides on objective-driven AI: the (1 − e)ⁿ argument that autoregressive generation "
        "diverges exponentially.\n"
        "- **He et al. 2021** (*Exposure Bias versus Self-Recovery*, EMNLP): language models recover from "
        "early errors more than the exposure-bias story predicts.\n"
        "- **Sinha et al. 2025** (*The Illusion of Diminishing Returns*): long tasks fail partly because models "
        "condition on their own earlier mistakes (self-conditioning).",
        "- **LeCun (2023)**, slides sobre IA orientada a objetivos: o argumento (1 − e)ⁿ de que a geração "
        "autorregressiva diverge exponencialmente.\n"
        "- **He et al. 2021** (*Exposure Bias versus Self-Recovery*, EMNLP): modelos de linguagem se recuperam de "
        "erros iniciais mais do que a história do viés de exposição prevê.\n"
        "- **Sinha et al. 2025** (*The Illusion of Diminishing Returns*): tarefas longas falham em parte porque os "
        "modelos se condicionam aos próprios erros anteriores (autocondicionamento)."))
