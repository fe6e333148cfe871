"""What the detector page draws (chapter 12): the coloured text and its scores, a score on the set's
distributions, the threshold's confusion matrix and ROC point, base rates, who gets flagged, the AUROC
table, the published figures and a conclusion computed from the numbers. ui.cached.detect computes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lab.detect import evaluation as detect_eval
from lab.detect.labelled_set import SETTINGS, SHORT
from lab.detect.scoring import BUCKETS, TOP
from ui import exports
from ui.i18n import lang, num, t
from ui.token_words import worded
from viz import detect as viz


def method_names() -> dict[str, str]:
    """Each document score's name on the page, with its source."""
    return {"fast_detectgpt": "Fast-DetectGPT (Bao et al. 2024)",
            "mean_logprob": t("mean log-probability (the perplexity signal GPTZero starts from)",
                              "log-probabilidade média (o sinal de perplexidade de onde o GPTZero parte)"),
            "mean_log_rank": t("mean log-rank (GLTR; Su et al. 2023)", "log-posto médio (GLTR; Su et al. 2023)"),
            "gltr_top10": t(f"GLTR: share of tokens in the top {num(BUCKETS[0])} (Gehrmann et al. 2019)",
                            f"GLTR: fração de tokens entre os {num(BUCKETS[0])} primeiros (Gehrmann et al. 2019)"),
            "binoculars": "Binoculars (Hans et al. 2024)"}


TEMPERATURE = SETTINGS["temperature_0.7"][0]  # the decoding setting's temperature, as the set was generated


def group_names() -> dict[str, str]:
    return {"lang:en": t("English", "inglês"), "lang:pt": t("Portuguese", "português"),
            "length:short": t(f"short (< {num(SHORT)} tokens)", f"curtos (< {num(SHORT)} tokens)"),
            "length:long": t(f"long ({num(SHORT)} tokens or more)", f"longos ({num(SHORT)} tokens ou mais)"),
            "setting:greedy": t("greedy", "gulosa"),
            "setting:temperature_0.7": t(f"temperature {num(TEMPERATURE, 1)}", f"temperatura {num(TEMPERATURE, 1)}"),
            "setting:top_k_40": "top-k 40", "setting:top_p_0.9": "top-p 0,9" if lang() == "pt" else "top-p 0.9",
            "setting:pure": t("pure sampling (temperature 1)", "amostragem pura (temperatura 1)")}


def bucket_names(buckets: tuple) -> list[str]:
    a, b, c = buckets  # ranks written plainly (1000): "1,000" would read as a decimal in Portuguese
    return [f"top {a}", f"top {b}", f"top {c}", t(f"beyond {c}", f"além de {c}")]


def set_note(rows: list[dict], model: str, observer: str | None) -> None:
    """Which models scored the evaluation set, and on how many of its texts."""
    n_h = sum(r["label"] == "human" for r in rows)
    who = model + (t(f", observer {observer}", f", observador {observer}") if observer else "")
    st.caption(t(f"Evaluation set: {num(n_h)} human texts (documentation no course model saw, and passages the "
                 f"project wrote) and {num(len(rows) - n_h)} continuations of their openings by the course decoders, "
                 f"scored with {who}. The whole set and its rebuild: `python -m lab detect-eval`, "
                 "`python -m lab detect-set`.",
                 f"Conjunto de avaliação: {num(n_h)} textos humanos (documentação que nenhum modelo do curso viu, e "
                 f"trechos escritos pelo projeto) e {num(len(rows) - n_h)} continuações das aberturas deles pelos "
                 f"decoders do curso, avaliados com {who}. O conjunto inteiro e como refazê-lo: "
                 "`python -m lab detect-eval`, `python -m lab detect-set`."))


def coloured_text(view: dict, buckets: tuple) -> None:
    """The text coloured by rank bucket (hover: rank, p, the model's top 5), the legend and the histogram."""
    names = bucket_names(buckets)
    st.html(viz.bucket_css() + " ".join(f'<span class="{viz.CLASS}{i}">{n}</span>' for i, n in enumerate(names)))
    tokens = [x | {"token": worded(x["token"]), "top": [y | {"token": worded(y["token"])} for y in x["top"]]}
              for x in view["tokens"]]  # a lone byte in words, in the tooltips
    st.html(viz.colored_html(view["runs"], tokens, lang(), t("rank", "posto"), t(f"top {TOP}", f"{TOP} primeiros")))
    st.caption(t("Each token is coloured by the rank the model gave it, knowing only the text before it (the first "
                 "token has no context and stays plain). Hover a token for its rank, its probability and what the "
                 "model expected instead.",
                 "Cada token tem a cor do posto que o modelo lhe deu, sabendo só o texto anterior (o primeiro token "
                 "não tem contexto e fica sem cor). Passe o mouse num token para ver o posto, a probabilidade e o "
                 "que o modelo esperava no lugar."))
    exports.chart("gltr-buckets", st, exports.later(viz.bucket_chart, view["scores"]["gltr"], names, t(
        "GLTR's histogram: where this text's tokens rank", "Histograma do GLTR: onde os tokens deste texto ficam"),
        t("share of tokens", "fração dos tokens"), lang()))


def scores_table(view: dict, evaluation: dict) -> None:
    """This text's document scores, each with its source and the set's human and machine medians
    (lab.detect.evaluation.evaluate's)."""
    names, doc, methods = method_names(), detect_eval.flat(view["scores"]), evaluation["methods"]
    table = [{t("score", "escore"): names[m], t("this text", "este texto"): num(doc[m], 3),
              t("human texts (median)", "textos humanos (mediana)"): num(methods[m]["median_human"], 3),
              t("machine texts (median)", "textos de máquina (mediana)"): num(methods[m]["median_machine"], 3)}
             for m in names if m in doc and m in methods]
    st.dataframe(frame := pd.DataFrame(table), hide_index=True)
    exports.table("detector-scores", st, frame)


def distribution(hist: dict, at: dict, value: float) -> None:
    """The chosen score over the set, human against machine (lab.detect.evaluation.histogram's bins and shares),
    with this text and the threshold marked."""
    names = {"machine": t("machine", "máquina"), "human": t("human", "humano")}
    exports.chart("detector-distribution", st, exports.later(viz.distribution_chart,
        hist, names, {t("this text", "este texto"): value, t("threshold", "limiar"): at["score_threshold"]},
        t("The set's texts on this score", "Os textos do conjunto neste escore"), method_names()[at["method"]],
        t("share of the group's texts", "fração dos textos do grupo"), lang()))


def threshold_section(at: dict) -> None:
    """The confusion matrix and TPR / FPR at the threshold (lab.detect.evaluation.at_threshold), and its point on
    the ROC curve."""
    left, right = st.columns(2)
    left.metric(t("machine texts caught (TPR)", "textos de máquina pegos (TPR)"), f"{num(100 * at['tpr'], 1)} %")
    left.metric(t("human texts flagged (FPR)", "textos humanos acusados (FPR)"), f"{num(100 * at['fpr'], 1)} %")
    flagged, passed = t("flagged as machine", "acusado de máquina"), t("passed as human", "passou por humano")
    left.dataframe(pd.DataFrame({"": [t("written by the machine", "escrito pela máquina"),
                                      t("written by a person", "escrito por uma pessoa")],
                                 flagged: [at["tp"], at["fp"]], passed: [at["fn"], at["tn"]]}), hide_index=True)
    area = num(at["auroc"], 3)
    curve = {k: np.asarray(v) for k, v in at["roc"].items()}  # arrays: a cached chart's key hashes them at once
    exports.chart("detector-roc", right, exports.later(viz.roc_chart,
        curve, (at["fpr"], at["tpr"]), t(f"ROC curve (AUROC {area})", f"Curva ROC (AUROC {area})"),
        t("human texts flagged", "textos humanos acusados"), t("machine texts caught", "textos de máquina pegos"),
        lang()))


def base_rate(human: float | None, prevalence: float) -> None:
    """Of the texts flagged, how many a person wrote (lab.detect.evaluation.base_rate), in words."""
    if human is None:
        st.info(t("At this threshold nothing is flagged.", "Com este limiar nada é acusado."))
        return
    n = round(100 * human)
    st.info(t(f"If {num(100 * prevalence, 0)} % of the essays in a class were machine-written, then of 100 essays "
              f"this detector flags, about **{n}** were written by students (Bayes' rule, from the TPR and FPR "
              "above).",
              f"Se {num(100 * prevalence, 0)} % das redações de uma turma fossem escritas por máquina, então de 100 "
              f"redações que este detector acusa, cerca de **{n}** foram escritas por alunos (regra de Bayes, com a "
              "TPR e a FPR acima)."))


def who_is_flagged(at: dict) -> None:
    """The threshold's FPR per language and length, its TPR per decoding setting and generating model."""
    names = group_names()
    rows = [{t("group", "grupo"): names.get(g, g.split(":", 1)[1]),
             t("rate", "taxa"): ("FPR" if v["rate"] == "fpr" else "TPR"), "%": num(100 * v["value"], 1),
             t("texts", "textos"): v["texts"]} for g, v in at["by_group"].items()]
    st.dataframe(frame := pd.DataFrame(rows), hide_index=True)
    exports.table("detector-who", st, frame)


def auroc_table(evaluation: dict) -> None:
    """Every score's AUROC, overall and per group (0.5 is a coin; under 0.5 the score ranks backwards)."""
    names, groups = method_names(), group_names()
    rows = [{t("score", "escore"): names[m], "AUROC": num(v["auroc"], 3),
             **{t(f"TPR at {f} FPR", f"TPR a {f} de FPR"): f"{num(100 * v['tpr_at_fpr'][k], 1)} %"
                for k, f in (("0.01", "1 %"), ("0.05", "5 %"))},
             **{groups.get(g, g.split(":", 1)[1]): num(x, 3) for g, x in v["by_group"].items()}}
            for m, v in evaluation["methods"].items()]
    st.dataframe(frame := pd.DataFrame(rows), hide_index=True)
    exports.table("detector-auroc", st, frame)
    n_h, n_m = evaluation["n_human"], evaluation["n_machine"]
    st.caption(t(f"RAID's headline figure beside the AUROC: the share of the {num(n_m)} machine texts caught when at "
                 f"most 1 % or 5 % of the {num(n_h)} human texts are wrongly flagged ({num(n_h // 100)} and "
                 f"{num(n_h * 5 // 100)} of them).",
                 f"O número principal do RAID ao lado da AUROC: a fração dos {num(n_m)} textos de máquina pegos quando "
                 f"no máximo 1 % ou 5 % dos {num(n_h)} textos humanos são acusados por engano ({num(n_h // 100)} e "
                 f"{num(n_h * 5 // 100)} deles)."))


def published() -> None:
    """Published figures beside ours, each with its source."""
    r, c, g = (detect_eval.PUBLISHED[k] for k in ("openai_roberta", "openai_classifier", "liang_2023"))
    st.markdown(t(
        f"- **OpenAI's RoBERTa detector for GPT-2 output** ({r['source'].replace(', ', ', *', 1)}*): about "
        f"{num(r['accuracy_pct'])} % accuracy on text from GPT-2 {num(r['generator_params_b'], 1)}B, and its authors "
        "advised against using it alone to decide anything.\n"
        f"- **OpenAI's AI text classifier** ({c['released']}): caught {num(c['caught_pct'])} % of AI-written text and "
        f"labelled {num(c['human_flagged_pct'])} % of human text as AI; withdrawn in {c['withdrawn']} for its low "
        "accuracy.\n"
        "- **Liang et al. 2023** (*GPT detectors are biased against non-native English writers*, Patterns): "
        f"{num(g['detectors'])} detectors flagged more than half of the TOEFL essays written by non-native speakers "
        "as AI-written.",
        f"- **O detector RoBERTa da OpenAI para texto do GPT-2** ({r['source'].replace(', ', ', *', 1)}*): cerca de "
        f"{num(r['accuracy_pct'])} % de acerto em texto do GPT-2 de {num(r['generator_params_b'], 1)} bilhão de "
        "parâmetros, e os próprios autores desaconselharam usá-lo sozinho para decidir qualquer coisa.\n"
        f"- **O classificador de texto de IA da OpenAI** (janeiro de 2023): pegou {num(c['caught_pct'])} % do texto "
        f"escrito por IA e marcou {num(c['human_flagged_pct'])} % do texto humano como IA; retirado em julho de 2023 "
        "pela baixa precisão.\n"
        "- **Liang et al. 2023** (*GPT detectors are biased against non-native English writers*, Patterns): "
        f"{num(g['detectors'])} detectores marcaram como IA mais da metade das redações do TOEFL escritas por falantes "
        "não nativos."))


def conclusion(evaluation: dict, r: dict, human_share: float | None) -> None:
    """The page's conclusion, every number in it read from the evaluation and the threshold (at_threshold's)."""
    names, methods, method, rates = method_names(), evaluation["methods"], r["method"], r["by_group"]
    best = max(methods, key=lambda m: methods[m]["auroc"])
    settings = {g: v["value"] for g, v in rates.items() if g.startswith("setting:")}
    easy, hard = max(settings, key=settings.get), min(settings, key=settings.get)
    en, pt = rates["lang:en"]["value"], rates["lang:pt"]["value"]
    groups = group_names()
    pct = lambda x: f"{num(100 * x, 0)} %"  # noqa: E731
    people = "" if human_share is None else t(
        f" With the share of machine text chosen above, {pct(human_share)} of the flagged texts were written by "
        "people.",
        f" Com a fração de texto de máquina escolhida acima, {pct(human_share)} dos textos acusados foram escritos por "
        "pessoas.")
    raid = methods[best]["tpr_at_fpr"]
    st.success(t(
        f"On this set the best score is {names[best]}, with an AUROC of {num(methods[best]['auroc'], 2)} (1 separates "
        f"perfectly, 0.5 is a coin); held to 1 % or 5 % of human texts wrongly flagged (of "
        f"{num(evaluation['n_human'])}), it catches {pct(raid['0.01'])} or {pct(raid['0.05'])} of the "
        f"{num(evaluation['n_machine'])} machine texts. At the chosen threshold, {names[method]} catches "
        f"{pct(r['tpr'])} of the machine texts and wrongly flags {pct(r['fpr'])} of the human ones: {pct(en)} of "
        f"the English and {pct(pt)} of the "
        f"Portuguese. It catches {pct(settings[easy])} of the {groups[easy]} texts and {pct(settings[hard])} of the "
        f"{groups[hard]} ones: what it measures is how a text was sampled, not who wrote it.{people}",
        f"Neste conjunto o melhor escore é {names[best]}, com AUROC de {num(methods[best]['auroc'], 2)} (1 separa "
        f"perfeitamente, 0,5 é cara ou coroa); limitado a 1 % ou 5 % dos textos humanos acusados por engano (de "
        f"{num(evaluation['n_human'])}), pega {pct(raid['0.01'])} ou {pct(raid['0.05'])} dos "
        f"{num(evaluation['n_machine'])} textos de máquina. Com o limiar escolhido, {names[method]} pega "
        f"{pct(r['tpr'])} dos textos de máquina e acusa por engano {pct(r['fpr'])} dos humanos: {pct(en)} dos em "
        f"inglês e {pct(pt)} dos "
        f"em português. Pega {pct(settings[easy])} dos textos de {groups[easy]} e {pct(settings[hard])} dos de "
        f"{groups[hard]}: o que ele mede é como o texto foi amostrado, não quem o escreveu.{people}"))
