"""What the code page draws (chapter 13): lab.gpt2's source with the chosen step's line marked, that step's
live tensor (its shape in words, a chart, where the course explains it), the key-value cache measured, and
the map from GPT-2's original file to ours. ui.cached.code computes."""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from lab import trace
from lab.trace import TOP
from ui import exports, presentation, url_state
from ui.cached import code as cached
from ui.draw.attention import names as attention_names
from ui.i18n import lang, num, t
from ui.token_words import worded
from viz import attention as heat
from viz import code as viz
from viz.format import written

# the chosen step's line: pale enough that every Pygments colour on it keeps 4.5:1 (WCAG AA; #ffe58a gave 3.9:1),
# outlined in a dark gold (4.7:1) so the line still stands out
MARK = "#fffadc"
MARK_LINE = "#8a6d00"
CODE_PX = {False: 12.5, True: 17}  # the source's font size, normal and presentation mode
# Each axis letter of lab/gpt2.py's shape comments in words; T and S together are queries and keys.
AXES = {"T": ("tokens", "tokens"), "S": ("tokens", "tokens"), "H": ("heads", "cabeças"), "D": ("numbers", "números"),
        "C": ("numbers", "números"), "3C": ("numbers", "números"), "4C": ("numbers", "números"),
        "2": ("keys and values", "chaves e valores"), "L": ("layers", "camadas"),
        "V": ("scores, one per vocabulary entry", "notas, uma por entrada do vocabulário")}


def square(step: str) -> bool:
    """True for a step of shape [H, T, S] (scores, masked, weights): the chosen head as a query x key heatmap."""
    return cached.steps()[step]["axes"] == ["H", "T", "S"]


def axes(step: str) -> list[tuple[str, str]]:
    """The words for each axis of a step's shape, in order, read from its shape comment in lab/gpt2.py."""
    letters = cached.steps()[step]["axes"]
    if "T" in letters and "S" in letters:
        return [AXES[a] if a not in "TS" else (("queries", "consultas") if a == "T" else ("keys", "chaves"))
                for a in letters]
    return [AXES[a] for a in letters]


def shape_words(step: str, shape: list[int]) -> str:
    """"16 tokens × 256 numbers": the shape read out."""
    return " × ".join(f"{num(n)} {t(*words)}" for n, words in zip(shape, axes(step), strict=True))


# Where each step was explained: (English, Portuguese, page or None)
POINTERS = {
    "wte": ("Chapter 02: one learned row per token id. The analogies page does arithmetic on these rows.",
            "Capítulo 02: uma linha aprendida por id de token. A página de analogias faz contas com essas linhas.",
            "app_pages/analogies.py"),
    "wte_plus_wpe": ("Chapter 03: attention alone ignores order, so each position adds a learned row of its own.",
                     "Capítulo 03: a atenção sozinha ignora a ordem, então cada posição soma uma linha própria, "
                     "aprendida.", None),
    "ln_1": ("Chapter 09: GPT-2 moved layer norm to the input of each sub-block (GPT-1 normalised after it).",
             "Capítulo 09: o GPT-2 levou a normalização para a entrada de cada sub-bloco (o GPT-1 normalizava "
             "depois).", None),
    "attn": ("Chapters 03–04: queries, keys and values, cut into heads. The attention page shows every head.",
             "Capítulos 03–04: consultas, chaves e valores, divididos em cabeças. A página de atenção mostra todas.",
             "app_pages/attention.py"),
    "attn.masked": ("Chapters 04 and 11: the mask. Above the diagonal every score becomes −∞, so the softmax "
                    "gives those keys exactly zero: no token sees the ones after it.",
                    "Capítulos 04 e 11: a máscara. Acima da diagonal todo score vira −∞, e o softmax dá a essas "
                    "chaves exatamente zero: nenhum token vê os que vêm depois.", "app_pages/causal_mask.py"),
    "attn.weights": ("The attention page shows these same numbers for this layer and head.",
                     "A página de atenção mostra estes mesmos números para esta camada e cabeça.",
                     "app_pages/attention.py"),
    "attn.present": ("Chapter 14: the key-value cache. Keys and values of past tokens never change, so they are "
                     "kept and reused (see below).",
                     "Capítulo 14: o cache de chaves e valores. As chaves e valores dos tokens passados não mudam, "
                     "então são guardados e reaproveitados (veja abaixo).", None),
    "residual": ("Chapter 05: the residual stream; the logit lens page reads it after every block.",
                 "Capítulo 05: o fluxo residual; a página da lente dos logits o lê depois de cada bloco.",
                 "app_pages/logit_lens.py"),
    "mlp": ("Chapter 05: the feed-forward layer, four times wider, one token at a time.",
            "Capítulo 05: a camada feed-forward, quatro vezes mais larga, um token por vez.", None),
    "logits": ("Chapter 07: the sampling page turns the last row into the next token.",
               "Capítulo 07: a página de amostragem transforma a última linha no próximo token.",
               "app_pages/sampling.py"),
}


def pointer(step: str) -> tuple[str, str, str | None]:
    """The POINTERS entry for a step (its own, or its group's)."""
    if step in POINTERS:
        return POINTERS[step]
    if step in ("x_plus_attn", "x_plus_mlp", "ln_2", "ln_f"):
        return POINTERS["residual"] if step != "ln_2" else POINTERS["ln_1"]
    if step == "present":
        return POINTERS["attn.present"]
    return POINTERS[step.split(".")[0]]


def source(step: str) -> None:
    """The function of lab/gpt2.py that makes the step, highlighted, the step's line marked."""
    text, line = cached.source(), cached.steps()[step]["line"]
    start, count = next((s, n) for s, n in cached.functions().values() if s <= line < s + n)
    body = "\n".join(text.splitlines()[start - 1:start - 1 + count])
    formatter = HtmlFormatter(noclasses=True, linenos="inline", linenostart=start, hl_lines=[line - start + 1])
    pale = f'<span style="background-color: {formatter.style.highlight_color}">'  # inline styles ignore hl_color
    marked = highlight(body, PythonLexer(), formatter).replace(pale, f'<span class="lab-step" style="background-color: '
                                                                     f'{MARK}; outline: 2px solid {MARK_LINE}">', 1)
    style = (f".lab-code pre {{font-size: {CODE_PX[presentation.on()]}px !important; white-space: pre-wrap; "
             "overflow-wrap: anywhere; margin: 0}")  # long lines wrap: the whole line stays in view
    st.html(f'<style>{style}</style><div class="lab-code">{marked}</div>')
    st.caption(t(f"lab/gpt2.py, line {line}", f"lab/gpt2.py, linha {line}"))


def tensor(view: dict, labels: list[str], step: str, head: int) -> None:
    """The step's live tensor: its shape in words, then a heatmap, bars or the top tokens."""
    st.markdown(f"**{html.escape(shape_words(step, view['shape']))}**")
    values, tokens = view["values"], t("token", "token")
    if square(step):
        title = t(f"head {head}", f"cabeça {head}")
        scheme = "blues" if step == "attn.weights" else "purpleorange"  # scores: either sign
        chart = exports.later(heat.heatmap, values, labels, title=title, size=min(560, 170 + 28 * len(labels)),
                              lang=lang(), scheme=scheme,
                              value_title=t("score", "score") if step != "attn.weights" else None,
                              names=attention_names())
    else:
        shown = t(f"the first {values.shape[1]} of {view['shape'][-1]} columns" if values.shape[1] < view["shape"][-1]
                  else "every column", f"as primeiras {values.shape[1]} de {view['shape'][-1]} colunas"
                  if values.shape[1] < view["shape"][-1] else "todas as colunas")
        rows = labels if step not in ("attn.present", "present") else labels[:len(values)]
        chart = exports.later(viz.matrix, values, rows, shown, tokens, t("column", "coluna"), lang())
    exports.chart(f"code-{step}", st, chart, key=f"code_chart_{step}")
    if len(view["norms"]) == len(labels) and not square(step):
        exports.chart(f"code-{step}-norms", st, exports.later(viz.norms, view["norms"], labels, t(
            "each token's vector length", "o comprimento do vetor de cada token"), tokens, t("norm", "norma"),
            lang()), key=f"code_norms_{step}")
    en, pt, page = pointer(step)
    st.caption(t(en, pt))
    if page:
        st.page_link(page, label=t("Open that page", "Abrir essa página"), icon=":material/arrow_forward:",
                     query_params=url_state.link(page))


def shown(token: str) -> str:
    """A token as a table shows it: line breaks and tabs visible (↵ ⇥), spaces as they are."""
    return token.replace("\n", "↵").replace("\t", "⇥")


def sci(x: float) -> str:
    """A small difference in scientific notation, as the reader's language writes it: 1.2e-05, 1,2e-05."""
    return written(f"{x:.1e}", lang())


def top(result: dict) -> None:
    """The last position's top tokens and the parity figure."""
    shown = [(worded(s), v) for s, v in result["top"]]  # a lone byte in words, never \\xc3
    title = t(f"the next token, top {TOP}", f"o próximo token, top {TOP}")
    exports.chart("code-top", st, exports.later(viz.top_logits, shown, title, "logit", lang()), key="code_top")
    st.caption(t(f"Largest difference from transformers' own logits on this text: {sci(result['max_abs_diff'])}.",
                 f"Maior diferença para os logits do próprio transformers neste texto: {sci(result['max_abs_diff'])}."))


def kv_section(rows: list[dict]) -> None:
    """The cache growing step by step, the cost of each step both ways, and how far apart their logits are."""
    cache, without = t("with the cache", "com o cache"), t("without (whole sequence again)", "sem (a sequência toda "
                                                           "de novo)")
    exports.chart("code-kv", st, exports.later(viz.kv_chart, rows, cache, without, t(
        "Cost of each new token", "Custo de cada token novo"), t("tokens so far", "tokens até aqui"), "ms", lang()),
        key="code_kv")
    frame = pd.DataFrame([{t("step", "passo"): r["step"], t("new token", "token novo"): shown(r["text"]),
                           "present": " × ".join(map(str, r["cache"])),
                           t("ms with cache", "ms com cache"): num(1000 * r["with_cache"], 2),
                           t("ms without", "ms sem"): num(1000 * r["without_cache"], 2),
                           t("largest logit difference", "maior diferença de logit"): sci(r["max_abs_diff"])}
                          for r in rows])
    st.dataframe(frame, hide_index=True)
    exports.table("code-kv", st, frame)


# One difference worth knowing per function of the original (English, Portuguese).
DIFFERENCES = {
    "default_hparams": ("Sizes come from the loaded model's config.", "Os tamanhos vêm do config do modelo."),
    "shape_list": ("torch shapes are always known; nothing to work around.",
                   "No torch as formas são sempre conhecidas; não há o que contornar."),
    "softmax": ("torch.softmax does the same (it also subtracts the row's maximum).",
                "torch.softmax faz o mesmo (também subtrai o máximo da linha)."),
    "gelu": ("The same tanh formula, written in torch.", "A mesma fórmula com tanh, escrita em torch."),
    "norm": ("g and b are passed in; TensorFlow 1 fetched them by variable scope.",
             "g e b chegam como argumentos; o TensorFlow 1 os buscava pelo escopo de variáveis."),
    "split_states": ("The same reshape, no batch axis.", "O mesmo reshape, sem o eixo do lote."),
    "merge_states": ("The same reshape, no batch axis.", "O mesmo reshape, sem o eixo do lote."),
    "conv1d": ("A 'convolution' of width 1 is a matrix product: x @ w + b.",
               "Uma 'convolução' de largura 1 é um produto de matrizes: x @ w + b."),
    "attention_mask": ("Returns booleans; the original returned 1.0/0.0 to multiply by.",
                       "Devolve booleanos; o original devolvia 1,0/0,0 para multiplicar."),
    "attn": ("The mask writes −∞ (exact zeros after softmax) where the original wrote w·b − 1e10·(1 − b); "
             "present holds the whole cache, the original only the new tokens (its sample.py joined them).",
             "A máscara escreve −∞ (zeros exatos depois do softmax) onde o original escrevia w·b − 1e10·(1 − b); "
             "present guarda o cache todo, o original só os tokens novos (o sample.py dele os juntava)."),
    "mlp": ("The same three lines; the width 4C is read from the weights.",
            "As mesmas três linhas; a largura 4C vem dos pesos."),
    "block": ("Identical: layer norm first, two residual additions.",
              "Idêntico: normalização primeiro, duas somas residuais."),
    "past_shape": ("Not needed: present's shape says it ([L, 2, H, S, D], no batch axis).",
                   "Desnecessário: a forma de present já diz ([L, 2, H, S, D], sem eixo do lote)."),
    "expand_tile": ("Not needed without a batch axis.", "Desnecessário sem o eixo do lote."),
    "positions_for": ("One line: past_length + arange(T).", "Uma linha: past_length + arange(T)."),
    "model": ("Weights come from transformers' modules (c_attn's weight is already [C, 3C]); no variable scopes.",
              "Os pesos vêm dos módulos do transformers (o peso de c_attn já é [C, 3C]); sem escopos de variáveis."),
}


def mapping() -> None:
    """Each function of openai/gpt-2's src/model.py beside ours, with line counts and one difference."""
    ours = cached.functions()
    rows = [{t("original (model.py)", "original (model.py)"): name,
             t("lines there", "linhas lá"): f"{a}–{z} ({z - a + 1})",
             t("ours (lab/gpt2.py)", "nosso (lab/gpt2.py)"): mine or "—",
             t("lines here", "linhas aqui"): f"{ours[mine][0]}–{sum(ours[mine]) - 1} ({ours[mine][1]})" if mine
             else "—", t("the difference", "a diferença"): t(*DIFFERENCES[name])}
            for name, (a, z, mine) in trace.ORIGINAL.items()]
    st.dataframe(frame := pd.DataFrame(rows), hide_index=True)
    exports.table("code-map", st, frame)
    st.caption(t(f"The original: [openai/gpt-2, src/model.py]({trace.ORIGINAL_URL}), TensorFlow 1, 175 lines, under "
                 "a modified MIT licence whose notice travels with copies; so this page links to it and maps it "
                 "rather than showing it. lab/gpt2.py is this project's own.",
                 f"O original: [openai/gpt-2, src/model.py]({trace.ORIGINAL_URL}), TensorFlow 1, 175 linhas, sob "
                 "uma licença MIT modificada cujo aviso acompanha as cópias; por isso esta página aponta para ele e "
                 "o mapeia em vez de mostrá-lo. O lab/gpt2.py é do próprio projeto."))
