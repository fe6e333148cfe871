"""What the perplexity page draws (chapters 06, 08, 09): the text it measures, the evaluations' progress,
the results table and charts, the surprisal views and the published figures; ui.cached.perplexity computes.
"""

from __future__ import annotations

import streamlit as st

from lab import perplexity, quoted
from ui import exports, presentation, widgets
from ui.cached import perplexity as cached
from ui.i18n import lang, num, t
from ui.limits import clip_perplexity
from ui.runs import perplexity as runs
from viz import perplexity as viz


def passage(text: str) -> str:
    """A chosen text cut at the hosted cap (with a notice), shown in an expander; the text measured."""
    text = clip_perplexity(text)
    with st.expander(t("Show the text", "Mostrar o texto")):
        st.text(text)
    return text


def results(chosen: list[str], text: str, fraction: float) -> list[dict]:
    """Each chosen model's result in turn (a progress bar while it is evaluated); a warning for one that cannot
    be had."""
    found = []
    for name in chosen:
        r = runs.evaluate(name, text, fraction, lambda words: st.progress(0.0, text=words))
        if "error" in r:
            st.warning(f"{name}: {r['error']}")  # the error is in the reader's language already
        else:
            found.append(r)
    return found


def table(results: list[dict], labels: dict, headers: dict) -> None:
    """The results table (and its export), which column to compare, and the bits-per-byte chart."""
    frame = viz.results_frame(results, labels)
    pseudo = t("pseudo-perplexity (encoder): not comparable", "pseudo-perplexidade (encoder): não comparável")
    st.dataframe(shown := viz.shown_table(frame, headers, lang(), pseudo), hide_index=True)
    exports.table("perplexity", st, shown)
    st.info(t("**Which column to compare.** Across models with different tokenizers (GPT-1, GPT-2, RoBERTa, the "
              "course models) compare **bits per byte** or **perplexity per word**: both divide the same total by "
              "something every model shares, the text. Perplexity per token compares only models with the same "
              "tokenizer (the GPT-2 sizes and DistilGPT-2; the three course decoders). Encoders' pseudo-perplexity "
              "sees both sides of each token and is not comparable with any decoder's number.",
              "**Qual coluna comparar.** Entre modelos com tokenizadores diferentes (GPT-1, GPT-2, RoBERTa, os "
              "modelos do curso) compare **bits por byte** ou **perplexidade por palavra**: as duas dividem o mesmo "
              "total por algo que todos os modelos têm em comum, o texto. Perplexidade por token só compara modelos "
              "com o mesmo tokenizador (os tamanhos do GPT-2 e o DistilGPT-2; os três decoders do curso). A "
              "pseudo-perplexidade dos encoders vê os dois lados de cada token e não se compara com número nenhum "
              "de decoder."))
    exports.chart("bits-per-byte", st, exports.later(viz.bits_chart,
        frame, t("Bits per byte, smaller models first", "Bits por byte, modelos menores primeiro"),
        t("bits per byte (lower is better)", "bits por byte (menor é melhor)"),
        {"decoder": t("decoder", "decoder"), "pseudo": pseudo}, lang()))


def quoted_beside(results: list[dict]) -> None:
    """Where gpt2 was measured: its perplexity on this text beside the figure the course quotes from its paper."""
    mine = next((r for r in results if r["model"] == quoted.NAME), None)
    if mine is None:
        return
    here, paper, size = num(float(mine["ppl"])), num(quoted.wikitext2_ppl()), quoted.PARAMS_PAPER // 1_000_000
    st.info(t(f"**GPT-2 small, the model the course describes:** {here} per token on this text; its paper gives "
              f"{paper} on WikiText-2 (zero-shot, table 3, where it is counted as {size}M). Another text, detokenised "
              "another way: the same order of magnitude, not the same digits.",
              f"**GPT-2 small, o modelo que o curso descreve:** {here} por token neste texto; o artigo dele dá "
              f"{paper} no WikiText-2 (zero-shot, tabela 3, onde ele conta como {size} milhões). Outro texto, "
              "destokenizado de outro jeito: a mesma ordem de grandeza, não os mesmos dígitos."))


def scale(results: list[dict]) -> None:
    """What scale buys: the course decoders' perplexity against their size (with two of them or more)."""
    frame = viz.scale_frame(results)
    if len(frame) < 2:
        return
    st.subheader(t("What scale buys, offline", "O que a escala compra, offline"))
    exports.chart("scale-curve", st, exports.later(viz.scale_chart,
        frame, t("Course decoders: same tokenizer, corpus and context; only size differs",
                 "Decoders do curso: mesmo tokenizador, corpus e contexto; só o tamanho muda"),
        t("non-embedding parameters (log)", "parâmetros fora dos embeddings (log)"),
        t("perplexity per token (log)", "perplexidade por token (log)"),
        t("unigram baseline", "linha de base unigrama"), lang()))


def surprisal(text: str, results: list[dict], fraction: float) -> None:
    """Which tokens surprised which model: one model's strip (ppl_strip), and two models word by word (ppl_a,
    ppl_b) when there are two; both views made once per (models, text, stride, language) by ui.cached."""
    st.subheader(t("Which tokens surprised which model", "Quais tokens surpreenderam qual modelo"))
    by_name = {r["model"]: r for r in results}
    one = widgets.Choice("ppl_strip", t("Model", "Modelo"), by_name, results[-1]["model"]).draw()
    st.caption(t("Darker red: more bits of surprise. Hover a token for its value. A character the tokenizer split "
                 "into several tokens (dotted underline) is shown whole, with the sum of its pieces' bits.",
                 "Vermelho mais escuro: mais bits de surpresa. Passe o mouse num token para ver o valor. Um caractere "
                 "que o tokenizador dividiu em vários tokens (sublinhado pontilhado) aparece inteiro, com a soma dos "
                 "bits das partes."))
    st.html(viz.view_css())  # the views' shades, once
    st.html(cached.strip_html(one, text, fraction, lang(), t("{n} tokens, summed", "{n} tokens, somados")))
    if len(results) < 2:
        return
    c1, c2 = presentation.stacking("surprisal").columns(2)
    pick_a = widgets.Choice("ppl_a", t("Model A", "Modelo A"), by_name, results[-1]["model"])
    pick_b = widgets.Choice("ppl_b", t("Model B", "Modelo B"), by_name, results[0]["model"])
    widgets.bind_all(pick_a, pick_b)  # both bound, then both drawn, as before
    a, b = pick_a.draw(c1), pick_b.draw(c2)
    st.caption(t(f"Per word, aligned by characters: green where {a} was less surprised than {b}, red where more.",
                 f"Por palavra, alinhado pelos caracteres: verde onde {a} se surpreendeu menos que {b}, "
                 "vermelho onde mais."))
    st.html(cached.compare_html(a, b, text, fraction, lang()))


def published(model_header: str) -> None:
    """The published figures, and why they differ from the page's."""
    st.subheader(t("Published figures", "Números publicados"))
    st.dataframe(published_table(model_header), hide_index=True)
    st.caption(t("The GPT-2 paper scores WikiText-2 after undoing its tokenization (spaces around punctuation, "
                 "@-@ markers), with its own detokenizers; raw text, as here and in the Hugging Face guide, scores "
                 "differently, so expect the same order of magnitude, not the same digits.",
                 "O artigo do GPT-2 mede o WikiText-2 depois de desfazer a tokenização dele (espaços em volta da "
                 "pontuação, marcas @-@) com destokenizadores próprios; texto cru, como aqui e no guia da Hugging "
                 "Face, dá outros valores: espere a mesma ordem de grandeza, não os mesmos dígitos."))


def texts() -> tuple[dict[str, str], dict[str, str]]:
    """The text selector's options as ({option: its text}, {option: its name in the UI language}): the bundled
    passages, the unseen documentation (cut at PAGE_CHARS) and "own" (its text: the reader's box's default)."""
    sources = {f"{p['id']}:{p['lang']}": p for p in perplexity.passages()}
    unseen = perplexity.unseen_texts()
    titles = {(p["id"], p["lang"]): p["title"] for p in sources.values()}  # an English text's title in Portuguese too
    cut = cached.PAGE_CHARS
    texts = {k: p["text"] for k, p in sources.items()} | {
        f"unseen:{code}": unseen[code][:cut] for code in ("en", "pt")} | {"own": sources["market:en"]["text"]}
    names = {k: f"{titles.get((p['id'], lang()), p['title'])} ({p['lang'].upper()})" for k, p in sources.items()} | {
        "unseen:en": t("Debian documentation no course model saw (EN)",
                       "Documentação Debian que nenhum modelo do curso viu (EN)"),
        "unseen:pt": t("Debian documentation no course model saw (PT)",
                       "Documentação Debian que nenhum modelo do curso viu (PT)"),
        "own": t("Your own text", "Seu próprio texto")}
    return texts, names


def headers() -> dict[str, str]:
    """The results table's column headers in the UI language (viz.perplexity.shown_table's keys)."""
    return {"model": t("model", "modelo"), "params": t("parameters", "parâmetros"),
            "tokens": t("tokens predicted", "tokens previstos"), "ppl": t("ppl / token", "ppl / token"),
            "bits_per_byte": t("bits / byte", "bits / byte"), "ppl_per_word": t("ppl / word", "ppl / palavra"),
            "note": t("note", "nota")}


# lab.perplexity.PUBLISHED's English wording, in Portuguese.
PUBLISHED_PT = {"WikiText-2": "WikiText-2", "WikiText-2 (raw), stride 1024": "WikiText-2 (texto cru), stride de 1.024",
                "WikiText-2 (raw), stride 512": "WikiText-2 (texto cru), stride de 512",
                "GPT-2 paper (Radford et al. 2019), table 3, zero-shot":
                    "artigo do GPT-2 (Radford et al. 2019), tabela 3, zero-shot",
                "GPT-2 paper, table 3, zero-shot": "artigo do GPT-2, tabela 3, zero-shot",
                'Hugging Face guide "Perplexity of fixed-length models"':
                    "guia da Hugging Face sobre a perplexidade de modelos de contexto fixo"}


def published_table(model_header: str):
    """perplexity.PUBLISHED as the page shows it: headers and wording in the UI language, numbers written its way."""
    import pandas as pd

    rows = pd.DataFrame(perplexity.PUBLISHED)
    if lang() == "pt":
        rows = rows.assign(dataset=[PUBLISHED_PT.get(d, d) for d in rows["dataset"]],
                           source=[PUBLISHED_PT.get(s, s) for s in rows["source"]],
                           ppl=[num(float(p)) for p in rows["ppl"]])
    return rows.rename(columns={"model": model_header, "dataset": t("data", "dados"), "source": t("source", "fonte")})
