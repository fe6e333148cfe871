"""What the fill-in-the-blank page draws (chapters 09-11): the fills, the encoder against the decoder, the trophy
pair, RoBERTa's masking live with the paper's four decisions, and GPT-1 → GPT-2 with every figure's source.
ui.cached.fill computes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lab import recipes
from lab.course import train
from ui import exports
from ui.cached import fill as cached
from ui.i18n import lang, num, t
from ui.token_words import worded
from viz import fill as viz


def insert_mask() -> None:
    """The "Insert <mask>" button: a mask at the end of the text (a text box cannot say where its cursor is)."""
    text = st.session_state.get("fill_text") or ""
    st.session_state["fill_text"] = (text.rstrip() + " <mask>").lstrip()


def pct(p: float | None) -> str:
    return "—" if p is None else f"{num(100 * p, 2)} %"


def fills(result: dict, in_order: bool) -> None:
    """The sentence with each mask's best candidate, then every mask's candidates."""
    if result["n_masks"] > 1:
        st.caption(t("Filled one after another, left to right: each mask is read with the masks before it already "
                     "filled by their best candidate.", "Preenchidas uma depois da outra, da esquerda para a direita: "
                     "cada máscara é lida com as anteriores já preenchidas pelo melhor candidato.") if in_order else
                   t("Each mask filled on its own: one pass with every mask in place, so no mask sees another's "
                     "answer (what transformers' fill-mask pipeline does).", "Cada máscara preenchida por conta "
                     "própria: uma passada com todas as máscaras no lugar, então nenhuma vê a resposta da outra (o "
                     "que faz o pipeline fill-mask do transformers)."))
    st.html(viz.sentence_html([(worded(s) if filled else s, filled) for s, filled in result["sentence"]]))
    columns = st.columns(min(3, len(result["masks"])))
    for k, (mask, col) in enumerate(zip(result["masks"], columns * len(result["masks"]), strict=False)):
        title = t(f"mask {k + 1} (token {mask['position']})", f"máscara {k + 1} (token {mask['position']})")
        shown = [c | {"token": worded(c["token"])} for c in mask["candidates"]]
        chart = exports.later(viz.candidates, shown, title, t("probability", "probabilidade"), lang())
        exports.chart(f"fill-mask-{k + 1}", col, chart, key=f"fill_chart_{k}")


def comparison(result: dict, encoder: str, decoder: str) -> None:
    """Both models' probability of every token, the positions where the right context helped most, the table."""
    best = viz.top_gains(result["gain"])
    frame = viz.compare_frame(result["positions"], result["labels"], f"{encoder} ({t('masked alone', 'mascarado')})",
                              f"{decoder} ({t('left only', 'só a esquerda')})")
    exports.chart("fill-compare", st, exports.later(viz.compare_chart, frame, result["labels"], best, t(
        "Probability of each token of the text", "Probabilidade de cada token do texto"),
        t("probability (log scale)", "probabilidade (escala log)"), lang()), key="fill_compare")
    words = ", ".join(f"“{result['labels'][i].strip() or result['labels'][i]}”" for i in best)
    st.caption(t(f"Shaded: where seeing the right-hand side helped most ({words}): the encoder's probability "
                 "divided by the decoder's is largest there.",
                 f"Em destaque: onde ver o lado direito mais ajudou ({words}): ali a probabilidade do encoder "
                 "dividida pela do decoder é a maior."))
    rows = [{t("token", "token"): label, f"p {encoder}": pct(r["encoder_p"]), t("rank", "posição") + " E":
             num(r["encoder_rank"]), f"p {decoder}": pct(r["decoder_p"]), t("rank", "posição") + " D":
             num(r["decoder_rank"])}
            for label, r in zip(result["labels"], result["positions"], strict=True)]
    with st.expander(t("Every position, with ranks", "Todas as posições, com a posição no ranking")):
        st.dataframe(table := pd.DataFrame(rows), hide_index=True)
        exports.table("fill-compare", st, table)


def trophy(rows: list[dict], encoder: str, decoder: str) -> None:
    """The trophy pair: what each model can use for the word that refers back."""
    st.dataframe(pd.DataFrame([{t("sentence", "frase"): r["sentence"], t("token", "token"): r["token"],
                                f"p {encoder}": pct(r["encoder_p"]), f"p {decoder}": pct(r["decoder_p"])}
                               for r in rows]), hide_index=True)
    st.caption(t("For each sentence: the word that refers back, then the word that decides what it refers to. The "
                 "decoder reads the first before the second, so its probability there is the same in both "
                 "sentences; the encoder sees both sides, and its probability changes with the deciding word.",
                 "Para cada frase: a palavra que retoma, depois a palavra que decide a quem ela se refere (a taça e a "
                 "mala são femininas, então \"ela\" pode ser qualquer uma). O decoder lê a primeira antes da "
                 "segunda, então a probabilidade dele ali é a mesma nas duas frases; o encoder vê os dois lados, e "
                 "a probabilidade dele muda com a palavra que decide."))


def action_words() -> dict:
    return {None: t("not asked", "não perguntado"), "mask": t("shown as <mask>", "mostrado como <mask>"),
            "random": t("shown as a random token", "mostrado como um token aleatório"),
            "kept": t("shown unchanged", "mostrado sem mudança")}


def masking(view: dict, epoch: int) -> None:
    """One epoch's tokens coloured by what training did, every epoch's pattern, and the shares counted."""
    words = action_words()
    actions = view["epochs"][epoch - 1]
    st.html(viz.chips_html(view["tokens"], actions, words))
    exports.chart("fill-masking", st, exports.later(viz.masking_grid, view["tokens"], view["epochs"], words, t(
        f"What training asks about, epoch by epoch ({cached.EPOCHS} epochs)",
        f"O que o treino pergunta, época a época ({cached.EPOCHS} épocas)"), t("epoch", "época"), lang()),
        key="fill_masking")
    flat = [a for e in view["epochs"] for a in e]
    asked = [a for a in flat if a]
    share = lambda a: f"{num(100 * asked.count(a) / len(asked), 0)} %" if asked else "—"  # noqa: E731
    st.caption(t(f"Over these {cached.EPOCHS} epochs: {num(100 * len(asked) / max(1, len(flat)), 0)} % of the "
                 f"tokens asked about (the rule: 15 %); of those {share('mask')} shown as <mask>, {share('random')} "
                 f"as a random token, {share('kept')} unchanged (the rule: 80/10/10). Few tokens, few draws: the "
                 "shares wander around the rule.",
                 f"Nestas {cached.EPOCHS} épocas: {num(100 * len(asked) / max(1, len(flat)), 0)} % dos tokens "
                 f"perguntados (a regra: 15 %); destes, {share('mask')} mostrados como <mask>, {share('random')} "
                 f"como um token aleatório, {share('kept')} sem mudança (a regra: 80/10/10). Poucos tokens, poucos "
                 "sorteios: as frações oscilam em torno da regra."))


ROW_WORDS = {
    "reference": ("published BERT-base", "BERT-base publicado"), "static": ("static masking", "máscara estática"),
    "dynamic": ("dynamic masking", "máscara dinâmica"),
    "segment_pair": ("pairs of segments, with NSP", "pares de segmentos, com NSP"),
    "sentence_pair": ("pairs of sentences, with NSP", "pares de frases, com NSP"),
    "full_sentences": ("full sentences across documents, no NSP", "frases inteiras entre documentos, sem NSP"),
    "doc_sentences": ("full sentences within one document, no NSP", "frases inteiras de um só documento, sem NSP"),
    "bsz_256": ("batch 256 × 1M steps, lr 1e-4", "lote 256 × 1M passos, lr 1e-4"),
    "bsz_2k": ("batch 2K × 125K steps, lr 7e-4", "lote 2K × 125K passos, lr 7e-4"),
    "bsz_8k": ("batch 8K × 31K steps, lr 1e-3", "lote 8K × 31K passos, lr 1e-3"),
    "16gb_100k": ("16 GB of text, 100K steps", "16 GB de texto, 100K passos"),
    "160gb_100k": ("160 GB, 100K steps", "160 GB, 100K passos"), "160gb_300k": ("160 GB, 300K steps",
                                                                                "160 GB, 300K passos"),
    "160gb_500k": ("160 GB, 500K steps", "160 GB, 500K passos"),
}
DECISIONS = {
    "masking": ("1. A new mask each time a sentence is seen (dynamic), not one fixed in preprocessing",
                "1. Uma máscara nova a cada vez que a frase aparece (dinâmica), não uma fixada no preparo"),
    "nsp": ("2. No next-sentence prediction: inputs of full sentences", "2. Sem previsão da próxima frase: "
            "entradas de frases inteiras"),
    "batch": ("3. Bigger batches (same passes over the data)", "3. Lotes maiores (o mesmo número de passadas)"),
    "data": ("4. More data, trained longer (BERT-large size)", "4. Mais dados, treino mais longo (tamanho "
             "BERT-large)"),
}


def roberta_decisions() -> None:
    """The paper's four decisions, each beside its own ablation table."""
    for key, table, metrics, rows in recipes.ROBERTA:
        st.markdown(f"**{t(*DECISIONS[key])}** · {t(f'paper, {table}', 'artigo, ' + table.replace('Table', 'tabela'))}")
        frame = pd.DataFrame([{t("setting", "configuração"): t(*ROW_WORDS[k]),
                               **{m: num(v, 2 if m == "ppl" else 1) for m, v in zip(metrics, values, strict=True)}}
                              for k, values in rows])
        st.dataframe(frame, hide_index=True)
    st.caption(t(f"Development-set results read from the paper ([Liu et al. 2019, arXiv:1907.11692]"
                 f"({recipes.ROBERTA_PAPER}), v1): SQuAD is F1, MNLI-m, SST-2 and RACE accuracy, ppl the held-out "
                 "perplexity of the masked-token objective. Tables 1-3 train BERT-base's size on BooksCorpus and "
                 "Wikipedia; Table 1's rows are medians of five seeds.",
                 f"Resultados no conjunto de desenvolvimento, lidos do artigo ([Liu et al. 2019, "
                 f"arXiv:1907.11692]({recipes.ROBERTA_PAPER}), v1): SQuAD é F1, MNLI-m, SST-2 e RACE são acurácia, "
                 "ppl a perplexidade do objetivo de máscara em dados separados. As tabelas 1-3 treinam o tamanho "
                 "do BERT-base com BooksCorpus e Wikipédia; as linhas da tabela 1 são medianas de cinco sementes."))


def course_roberta() -> None:
    """What trained course-roberta, read from its training record and code."""
    r = recipes.course_roberta_training()
    yes, no = t("yes", "sim"), t("no", "não")
    rows = [(t("tokens asked about", "tokens perguntados"), f"{num(100 * r['masked_share'], 0)} %, 80/10/10"),
            (t("a new mask for every batch (dynamic)", "máscara nova a cada lote (dinâmica)"), yes if r["dynamic"]
             else no), (t("next-sentence prediction", "previsão da próxima frase"), yes if r["nsp"] else no),
            (t("batch", "lote"), t(f"{r['batch']} windows of {r['window']} tokens",
                                   f"{r['batch']} janelas de {r['window']} tokens")),
            (t("steps", "passos"), num(r["steps"])), (t("tokens seen", "tokens vistos"), num(r["tokens_seen"])),
            (t("learning rate", "taxa de aprendizado"), num(r["lr"], 3)),
            (t("parameters", "parâmetros"), num(r["params"]))]
    st.dataframe(pd.DataFrame(rows, columns=[t("course-roberta's training", "o treino do course-roberta"),
                                             t("value", "valor")]), hide_index=True)
    st.caption(t("Read from docs/course-models-run/training.json (the run's record) and lab/course/train.py, whose "
                 "mask_tokens drew the masks above: it is called for every batch, so the masking is dynamic, and "
                 "each window is one stretch of text, so there is no second segment to predict.",
                 "Lido de docs/course-models-run/training.json (o registro do treino) e de lab/course/train.py, cuja "
                 "mask_tokens sorteou as máscaras acima: ela é chamada a cada lote, então a máscara é dinâmica, e "
                 "cada janela é um só trecho de texto, então não há segundo segmento a prever."))


def gpt_history() -> None:
    """GPT-1 beside GPT-2: each decision, both values and where each was read."""
    a, ln, p1, p2 = recipes.architecture(), recipes.layer_norm_lines(), *recipes.PAPER_FIGURES.values()
    g1, g2 = a["openai-gpt"], a["gpt2"]
    code = t("transformers' code", "código do transformers")
    config = t("transformers' default configs (the released checkpoints')", "configs padrão do transformers (os "
               "dos modelos publicados)")
    books, docs, gb, karma = num(p1["books_over"]), num(p2["documents_over"] / 1e6, 0), num(p2["gigabytes"]), \
        num(p2["reddit_karma_at_least"])
    seqs, seq_len, merges, std = num(p1["batch_sequences"]), num(p1["sequence_tokens"]), num(p1["bpe_merges"]), \
        num(p1["init_std"])
    papers = {"data": (t("training text", "texto de treino"), t(f"BooksCorpus: over {books} unpublished books",
                                                                f"BooksCorpus: mais de {books} livros inéditos"),
                       t(f"WebText: slightly over {docs} million documents, {gb} GB (pages linked from Reddit with "
                         f"at least {karma} karma, Wikipedia removed)", f"WebText: pouco mais de {docs} milhões de "
                         f"documentos, {gb} GB (páginas com link no Reddit com pelo menos {karma} de karma, sem a "
                         "Wikipédia)")),
              "batch": (t("batch", "lote"), t(f"{seqs} sequences of {seq_len} tokens",
                                              f"{seqs} sequências de {seq_len} tokens"), num(p2["batch_sequences"])),
              "init": (t("initialisation", "inicialização"), f"N(0; {std})" if lang() == "pt" else f"N(0, {std})",
                       t("residual weights scaled by 1/√N (N residual layers)", "pesos residuais escalados por "
                         "1/√N (N camadas residuais)")),
              "bpe": (t("tokenizer", "tokenizador"), t(f"BPE, {merges} merges", f"BPE, {merges} fusões"),
                      t("byte-level BPE", "BPE em bytes"))}
    rows = [(t("layer norm", "normalização"), " · ".join(ln["openai-gpt"]) + t(" (after the residual)",
                                                                              " (depois do residual)"),
             " · ".join(ln["gpt2"]) + t(" (before each sub-block)", " (antes de cada sub-bloco)"), code),
            (t("context (tokens)", "contexto (tokens)"), num(g1["context"]), num(g2["context"]), "lab.models.registry"),
            (t("vocabulary", "vocabulário"), num(g1["vocabulary"]), num(g2["vocabulary"]), config),
            (t("layers × heads × width", "camadas × cabeças × largura"), f"{g1['layers']} × {g1['heads']} × "
             f"{g1['width']}", f"{g2['layers']} × {g2['heads']} × {g2['width']}", config),
            (t("parameters", "parâmetros"), num(g1["params"]), " / ".join(num(p) for p in a["gpt2-sizes"].values()),
             "lab.models.registry")]
    rows += [(w, one, two, t("GPT-1 paper §4.1; GPT-2 paper §2", "artigo do GPT-1 §4.1; do GPT-2 §2"))
             for w, one, two in papers.values()]
    st.dataframe(pd.DataFrame(rows, columns=[t("decision", "decisão"), "GPT-1", "GPT-2", t("source", "fonte")]),
                 hide_index=True)
    st.caption(t(f"Papers: [GPT-1]({recipes.GPT1_PAPER}) (Radford et al. 2018), [GPT-2]({recipes.GPT2_PAPER}) "
                 "(Radford et al. 2019). The GPT-2 parameters are the four released sizes (small to XL).",
                 f"Artigos: [GPT-1]({recipes.GPT1_PAPER}) (Radford et al. 2018), [GPT-2]({recipes.GPT2_PAPER}) "
                 "(Radford et al. 2019). Os parâmetros do GPT-2 são os quatro tamanhos publicados, do menor ao XL."))


def training_words() -> str:
    """How RoBERTa is trained, the recipe's shares read from the function that trained course-roberta."""
    chosen, shown, swapped = (num(100 * x, 0) for x in (train.MASK_PROB, train.MASK_SHOWN, train.MASK_RANDOM))
    kept = num(100 * (1 - train.MASK_SHOWN - train.MASK_RANDOM), 0)
    return t(f"Training hides {chosen} % of the tokens and asks the model for them; of those, {shown} % are shown as "
             f"<mask>, {swapped} % as a random token and {kept} % unchanged, so the model cannot trust what it sees. "
             "BERT drew the masks once, while preparing the data (static); RoBERTa draws new ones every time a "
             "sentence comes back (dynamic). These are drawn by the very function that trained course-roberta.",
             f"O treino esconde {chosen} % dos tokens e pede ao modelo que os adivinhe; destes, {shown} % aparecem "
             f"como <mask>, {swapped} % como um token aleatório e {kept} % sem mudança, para o modelo não confiar no "
             "que vê. O BERT sorteava as máscaras uma vez, ao preparar os dados (estática); o RoBERTa sorteia novas "
             "cada vez que a frase volta (dinâmica). Estas são sorteadas pela mesma função que treinou o "
             "course-roberta.")
