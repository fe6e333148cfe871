"""What the fossils page draws (chapter 00): the three tables (shape, cost, history), the charts, GPT-2's
paper figures against the released counts, and the sources. ui.cached.fossils computes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lab import fossils
from lab.recipes import PAPER_FIGURES
from ui import exports
from ui.i18n import lang, num, size, t
from viz import fossils as viz

MERGES = PAPER_FIGURES["openai-gpt"]["bpe_merges"]  # GPT-1's character-level BPE (the paper's figure, in lab)


def words() -> dict:
    """The codes of lab.fossils (layer-norm place, tokenizer, position scheme, changed fields) in words."""
    return {"post": t("after each sub-block (post-LN)", "depois de cada sub-bloco (pós-LN)"),
            "pre": t("before each sub-block, and a final one (pre-LN)", "antes de cada sub-bloco, e uma no fim "
                     "(pré-LN)"),
            "char-bpe": t(f"BPE over characters, {num(MERGES)} merges", f"BPE sobre caracteres, {num(MERGES)} fusões"),
            "byte-bpe": t("BPE over bytes", "BPE sobre bytes"),
            "learned": t("learned, one vector per position", "aprendidas, um vetor por posição"),
            "learned-offset": t("learned, starting after the padding index", "aprendidas, a partir do índice de "
                                "preenchimento"),
            "decoder": "decoder", "encoder": "encoder", "layers": t("layers", "camadas"),
            "width": t("width", "largura"),
            "heads": t("heads", "cabeças"), "context": t("context", "contexto"), "vocabulary": t("vocabulary",
                                                                                                 "vocabulário"),
            "tokenizer": t("tokenizer", "tokenizador"), "layer_norm": t("layer norm", "normalização de camada"),
            "kind": t("kind", "tipo"), "data": t("data", "dados")}


def _value(v, w: dict) -> str:
    return num(v) if isinstance(v, int) else w.get(v, v) if isinstance(v, str) else str(v)


def changed(r: dict, w: dict) -> str:
    """What changed from the row above, in words: 'layers 12 → 24; width 768 → 1,024'."""
    if not r["changed"]:
        return "—"
    return "; ".join(w[c["field"]] if c["field"] == "data" else
                     f"{w[c['field']]} {_value(c['before'], w)} → {_value(c['after'], w)}" for c in r["changed"])


def shape_table(rows: list[dict]) -> None:
    w = words()
    shown = [{t("model", "modelo"): r["name"], t("kind", "tipo"): r["kind"], t("layers", "camadas"): num(r["layers"]),
              t("heads", "cabeças"): num(r["heads"]), t("width", "largura"): num(r["width"]),
              t("context", "contexto"): num(r["context"]), t("vocabulary", "vocabulário"): num(r["vocabulary"]),
              t("tokenizer", "tokenizador"): w[r["tokenizer"]], t("positions", "posições"): w[r["position_scheme"]],
              t("layer norm", "normalização de camada"): w[r["layer_norm"]],
              t("tied embeddings", "embeddings amarrados"): t("yes", "sim") if r["tied"] else t("no", "não")}
             for r in rows]
    st.dataframe(frame := pd.DataFrame(shown), hide_index=True, key="fos_shape")
    exports.table("fossils-shape", st, frame)


def cost_table(rows: list[dict]) -> None:
    shown = [{t("model", "modelo"): r["name"], t("parameters", "parâmetros"): num(r["params"]["total"]),
              "embeddings": num(r["params"]["embeddings"]), t("attention", "atenção"): num(r["params"]["attention"]),
              "MLP": num(r["params"]["mlp"]), t("norms", "normas"): num(r["params"]["norms"]),
              t("head", "cabeça de saída"): num(r["params"]["head"]),
              t("GFLOPs per token", "GFLOPs por token"): num(r["flops_per_token"]["total"] / 1e9, 3),
              "fp32": size(r["weights_bytes"]["fp32"]), "fp16": size(r["weights_bytes"]["fp16"]),
              "int8": size(r["weights_bytes"]["int8"]),
              t("KV cache per token (fp16)", "cache KV por token (fp16)"):
                  size(r["kv_cache"]["fp16_per_token"]) if r["kv_cache"] else "—",
              t("KV cache, full context (fp16)", "cache KV, contexto cheio (fp16)"):
                  size(r["kv_cache"]["fp16_per_context"]) if r["kv_cache"] else "—"} for r in rows]
    st.dataframe(frame := pd.DataFrame(shown), hide_index=True, key="fos_cost")
    exports.table("fossils-cost", st, frame)


def history_table(rows: list[dict]) -> None:
    w, pt = words(), lang() == "pt"
    shown = [{t("model", "modelo"): r["name"], t("released", "lançado"): r["date"] or "—",
              t("training data", "dados de treino"): fossils.BY_NAME[r["name"]].data[pt] if r["name"] in
              fossils.BY_NAME else "—",
              t("data size", "tamanho dos dados"): size(r["data_bytes"]) if r["data_bytes"] else "—",
              t("tokens seen", "tokens vistos"): num(r["tokens_seen"]) if r["tokens_seen"] else "—",
              t("published figure", "número publicado"): num(r["paper_params"]) if r["paper_params"] else "—",
              t("what changed from the row above", "o que mudou em relação à linha de cima"): changed(r, w)}
             for r in rows]
    st.dataframe(frame := pd.DataFrame(shown), hide_index=True, key="fos_history")
    exports.table("fossils-history", st, frame)


def charts(rows: list[dict]) -> None:
    """The timeline, parameters against context, and each model's parameters by part."""
    df = viz.frame(rows)
    common = {"model": t("model", "modelo"), "params": t("parameters", "parâmetros"),
              "date": t("released", "lançado"), "context": t("context (tokens)", "contexto (tokens)")}
    left, right = st.columns(2)
    exports.chart("fossils-timeline", left, exports.later(viz.timeline, df, common | {"title": t(
        "Parameters over time (log scale)", "Parâmetros ao longo do tempo (escala log)")}, lang()))
    exports.chart("fossils-context", right, exports.later(viz.by_context, df, common | {"title": t(
        "Parameters against context (log scales)", "Parâmetros contra contexto (escalas log)")}, lang()))
    parts = {"embeddings": "embeddings", "attention": t("attention", "atenção"), "mlp": "MLP",
             "norms": t("norms", "normas"), "head": t("head", "cabeça de saída")}
    exports.chart("fossils-split", st, exports.later(viz.split, rows, parts, common | {
        "title": t("Where the parameters are", "Onde estão os parâmetros"), "share": t("share", "fração"),
        "part": t("part", "parte")}, lang()))


def paper_gap(report: dict) -> None:
    """GPT-2's paper figures against the released counts, and the counts that would give the paper's."""
    gap = report["gpt2_paper_gap"]
    rows = [{t("model", "modelo"): g["name"], t("released (counted)", "lançado (contado)"): num(g["released"]),
             t("paper", "artigo"): num(g["paper"]), t("gap", "diferença"): num(g["gap"]),
             t("gap ÷ width", "diferença ÷ largura"): num(g["gap_rows"], 0),
             t("without position embeddings", "sem embeddings de posição"): num(g["tries"]["no_positions"]["count"]),
             t(f"with a {num(fossils.GPT1_VOCAB)}-token vocabulary",
               f"com vocabulário de {num(fossils.GPT1_VOCAB)} tokens"):
                 num(g["tries"]["gpt1_vocabulary"]["count"])} for g in gap]
    st.dataframe(frame := pd.DataFrame(rows), hide_index=True, key="fos_gap")
    exports.table("fossils-gpt2-paper", st, frame)
    lo, hi = report["fitting_vocabularies"]
    st.markdown(t(
        f"The gap grows with the width: divided by it, it is {num(min(g['gap_rows'] for g in gap), 0)} to "
        f"{num(max(g['gap_rows'] for g in gap), 0)} rows of the embedding table in every size. Counting the released "
        "architecture with a token embedding of 40,478 rows (GPT-1's vocabulary) instead of 50,257 gives all four "
        f"paper figures to the nearest million; any size from {num(lo)} to {num(hi)} rows would too. Leaving out "
        "the position embeddings, or every embedding, gives none of them. That is all the arithmetic shows: the "
        "paper does not say how it counted.",
        f"A diferença cresce com a largura: dividida por ela, dá de {num(min(g['gap_rows'] for g in gap), 0)} a "
        f"{num(max(g['gap_rows'] for g in gap), 0)} linhas da tabela de embeddings em todos os tamanhos. Contar a "
        "arquitetura lançada com um embedding de tokens de 40.478 linhas (o vocabulário do GPT-1) em vez de 50.257 "
        "dá os quatro números do artigo, arredondados ao milhão; qualquer tamanho de "
        f"{num(lo)} a {num(hi)} linhas daria também. Tirar os embeddings de posição, ou todos os embeddings, não "
        "dá nenhum deles. É só isso que a aritmética mostra: o artigo não diz como contou."))


def sources(rows: list[dict]) -> None:
    """Where each configuration and each figure comes from."""
    pt = lang() == "pt"
    with st.expander(t("Sources", "Fontes")):
        for r in rows:
            f = fossils.BY_NAME.get(r["name"])
            if f is None:
                continue
            st.markdown(f"**{r['name']}** · {t('configuration', 'configuração')}: {f.source[pt]}"
                        + (f" · {t('published figure', 'número publicado')}: {f.paper_source[pt]}"
                           if f.paper_source[pt] else "")
                        + f" · {t('tokens seen', 'tokens vistos')}: {f.tokens_source[pt]}")
