"""What the attention and causal-mask pages draw beside their charts (chapters 03, 04 and 11): the two
columns of the attention page, the mask's heatmaps, the trophy pair's inputs and series, titles and notes, and
the widget callbacks;
ui.cached.attention computes.
"""

from __future__ import annotations

import streamlit as st

from lab import quoted
from lab.causal import TROPHY
from lab.models import hub
from ui import exports, messages, presentation, widgets
from ui.cached import attention as cached
from ui.draw.cuts import cut_note as _cut_note
from ui.i18n import lang, num, signed, t
from viz import attention as viz


def quoted_split(s: dict, name: str) -> None:
    """On gpt2: the split chapter 04 quotes for GPT-2 small beside the one this copy gives (lab.quoted)."""
    if name != quoted.NAME:
        return
    q = quoted.figures()
    same = (s["n_embd"], s["n_head"], s["head_dim"], s["n_layer"]) == (q["n_embd"], q["n_head"], q["head_dim"],
                                                                      q["n_layer"])
    verdict = (t("the same split.", "a mesma divisão.") if same
               else t("not the released shape.", "não é o formato publicado."))
    st.caption(t(f"As the course quotes GPT-2 small (chapter 04): {num(q['n_embd'])} = {q['n_head']} heads × "
                 f"{q['head_dim']} dimensions, {q['n_layer']} layers. This copy: {num(s['n_embd'])} = "
                 f"{s['n_head']} × {s['head_dim']}, {s['n_layer']} layers: {verdict}",
                 f"Como o curso cita o GPT-2 small (capítulo 04): {num(q['n_embd'])} = {q['n_head']} cabeças × "
                 f"{q['head_dim']} dimensões, {q['n_layer']} camadas. Esta cópia: {num(s['n_embd'])} = "
                 f"{s['n_head']} × {s['head_dim']}, {s['n_layer']} camadas: {verdict}"))


def pick_head(source: str, frame) -> None:
    """Widget callback: open the head clicked in the summary grid or selected in the table."""
    sel = st.session_state[source].selection
    rows = sel.get("pick") if source == "attn_grid" else [frame.iloc[i] for i in sel.get("rows", [])]
    if rows:
        st.session_state["attn_layer"], st.session_state["attn_head"] = int(rows[0]["layer"]), int(rows[0]["head"])


def summary_columns() -> dict:
    """st.dataframe column_config for the per-head table: short translated headers, 3 decimals
    (in Portuguese viz.attention.summary_shown has written them already, with a decimal comma)."""
    words = names()
    short = {"entropy": t("entropy", "entropia"), "previous": t("previous", "anterior"),
             "first": t("first", "primeiro"), "self": t("self", "próprio")}

    def column(label, c):
        if lang() == "pt":
            return st.column_config.TextColumn(label, help=words[c])
        return st.column_config.NumberColumn(label, format="%.3f", help=words[c])

    return {"layer": st.column_config.NumberColumn(words["layer"], width=56),
            "head": st.column_config.NumberColumn(words["head"], width=56),
            **{c: column(label, c) for c, label in short.items()}}


def all_heads(view: dict, frame, metric: widgets.Widget, words: dict) -> str:
    """The overview of every head (its PNG export), the colour-by radio and the clickable layer x head grid;
    the summary chosen to colour by (the table of every head is ordered by it too)."""
    st.subheader(t("All heads", "Todas as cabeças"))
    n_layer, n_head = view["window"].shape[:2]
    # PNG, as made: "auto" would re-encode this PNG as a JPEG on every rerun (Streamlit picks JPEG for an image
    # without alpha), a cost per reader and blurred labels.
    st.image(view["overview"], output_format="PNG",
             caption=t("Rows: layers; columns: heads. Each head scaled to its own maximum.",
                       "Linhas: camadas; colunas: cabeças. Cada cabeça na sua própria escala."),
             alt=t(f"Attention of all {n_layer} layers × {n_head} heads on this text: one small square per head, "
                   "rows are layers, columns are heads, darker blue where a token looks at another more. "
                   "The table of every head is below.",
                   f"A atenção de todas as {n_layer} camadas × {n_head} cabeças neste texto: um quadradinho por "
                   "cabeça, linhas são camadas, colunas são cabeças, azul mais escuro onde um token olha mais "
                   "para outro. A tabela de todas as cabeças está abaixo."))
    exports.image("attention-overview", st, view["overview"])
    grid = exports.later(viz.summary_grid, frame, by := metric.draw(), names=words, lang=lang())
    exports.chart("head-summary", st, grid, key="attn_grid", width="stretch" if presentation.on() else "content",
                  on_select=lambda: pick_head("attn_grid", frame))
    st.caption(t("Click a cell to open that head.", "Clique numa célula para abrir a cabeça."))
    return by


def one_head(view: dict, frame, layer_input: widgets.Widget, head_input: widgets.Widget, start: int,
             words: dict, by: str) -> None:
    """The layer and head pickers, the chosen head's heatmap over the window from `start`, and the table of
    every head, the highest `by` first (a row opens it)."""
    c1, c2 = st.columns(2)
    layer, head = layer_input.draw(c1), head_input.draw(c2)
    # Always a line between the pickers and the chart: the chart's toolbar, shown on hover over the chart's top
    # edge, would otherwise lie over the Head dropdown's arrow (tests/test_browser_attention.py).
    st.caption(t("Rows: the token looking (query); columns: the tokens it looks at (keys). Each row sums to 1.",
                 "Linhas: o token que olha (query); colunas: os tokens que ele olha (keys). Cada linha soma 1."))
    n = len(view["ids"])
    shown = min(n - start, viz.HEATMAP_MAX)
    if n > viz.HEATMAP_MAX:
        st.caption(t(f"The heatmap shows tokens {start}–{start + shown - 1} of {n} (at most {viz.HEATMAP_MAX} stay "
                     "legible); the overview and the table cover them all.",
                     f"O mapa mostra os tokens {start}–{start + shown - 1} de {n} (no máximo {viz.HEATMAP_MAX} "
                     "ficam legíveis); a visão geral e a tabela cobrem todos."))
    chart = exports.later(viz.heatmap, view["window"][layer, head], view["labels"][start:start + shown], offset=start,
                          title=t(f"Layer {layer}, head {head}", f"Camada {layer}, cabeça {head}"),
                          names=words, lang=lang())
    exports.chart("attention-head", st, chart)  # fills its column, never spills into the next
    st.caption(t(f"Every head, one row each, sorted by {words[by]}, highest first (\"Colour by\" picks the order): "
                 "click a row to open it; click a column to sort by it.",
                 f"Cada cabeça, uma linha, ordenadas por {words[by]}, do maior valor para o menor (\"Cor por\" "
                 "escolhe a ordem): clique numa linha para abri-la; clique numa coluna para ordenar por ela."))
    ordered = viz.summary_order(frame, by)  # the rows as shown: a selected row's number is its place here
    st.dataframe(viz.summary_shown(ordered, lang()), key="attn_table",
                 on_select=lambda: pick_head("attn_table", ordered),
                 selection_mode="single-row", hide_index=True, height=240, column_config=summary_columns())


def mask_heatmaps(m, text: str, masks: list[bool], words: dict) -> None:
    """The sentence's scores and weights with the mask and without it (`masks`), and the loss each gives."""
    inputs = (widgets.Choice("mask_layer", t("Layer", "Camada"), range(m.n_layer), 0),  # ranges of this model
              widgets.Choice("mask_head", t("Head", "Cabeça"), range(m.n_head), 0))
    widgets.bind_all(*inputs)  # before the columns, as ever: a link's notice about them stays above them
    layer, head = (w.draw(col) for w, col in zip(inputs, st.columns(2), strict=True))
    views = {on: cached.mask_view(m.name, text, on) for on in masks}
    if False not in views:  # GPT-1's mask is built into every layer
        st.warning(t(f"Without the mask: not available for {m.name}, which builds its causal mask into every "
                     "attention layer; removing it would mean changing the shared model, which this app never does.",
                     f"Sem a máscara: indisponível para {m.name}, que embute a máscara causal em cada camada de "
                     "atenção; tirá-la exigiria alterar o modelo compartilhado, o que este app nunca faz."))
    if views[True]["n_total"] > viz.HEATMAP_MAX:
        st.caption(t(f"Showing the first {viz.HEATMAP_MAX} tokens.",
                     f"Mostrando os primeiros {viz.HEATMAP_MAX} tokens."))
    for on, v in views.items():
        st.subheader(t("With the causal mask", "Com a máscara causal") if on
                     else t("Without the mask", "Sem a máscara"))
        left, right = presentation.stacking(f"causal-{on}").columns(2)
        tags, which = v["labels"], "masked" if on else "unmasked"
        scores = exports.later(viz.heatmap, v["scores"][layer, head], tags, t("Scores q·k/√d (before softmax)",
                               "Scores q·k/√d (antes do softmax)"), value_title="score", scheme="purpleorange",
                               digits=1, names=words, lang=lang())
        exports.chart(f"scores-{which}", left, scores)
        weights = exports.later(viz.heatmap, v["attention"][layer, head], tags, t("Weights (after softmax)",
                                "Pesos (depois do softmax)"), names=words, lang=lang())
        exports.chart(f"weights-{which}", right, weights)
    loss_without_mask(views)


def loss_without_mask(views: dict) -> None:
    """The next-token loss without the mask against with it (views: mask on/off -> mask_view), explained."""
    if False not in views or views[True]["loss"] is None:
        return
    a, b = views[True]["loss"], views[False]["loss"]
    delta = signed(b - a, 3)
    st.metric(t("Next-token loss without the mask (nats)", "Perda do próximo token sem a máscara (nats)"),
              num(b, 3), f"{delta} " + t(f"vs {num(a, 3)} with it", f"vs {num(a, 3)} com ela"),
              delta_color="off")  # neither direction is "better": see the caption
    st.caption(t("Without the mask each position can also see the very token it must predict, so this loss "
                 "stops being an honest score: lower means leakage, not skill; higher means the model, trained "
                 "with the mask, never learned to read the future.",
                 "Sem a máscara cada posição também vê o próprio token que deve prever, então esta perda deixa "
                 "de ser uma medida honesta: menor é vazamento, não habilidade; maior mostra que o modelo, "
                 "treinado com a máscara, nunca aprendeu a ler o futuro."))


def load_pair() -> None:
    """Widget callback: fill the two sentences and the word from the chosen pair."""
    a, b, word = TROPHY[st.session_state["trophy_pair"]]
    st.session_state.update(trophy_a=a, trophy_b=b, trophy_word=word)


def trophy_sentences() -> tuple[str, str, str]:
    """The trophy pair (English / Portuguese), the Portuguese one explained, then the two sentences and the
    word it fills; their values.

    The pair, both sentences and the word keep what the reader typed across page switches and reruns
    that stop before drawing them (an emptied sentence above), and travel in the link; the pair
    starts in the UI language, the sentences and the word at the pair's. So all four are bound before
    the pair's radio is drawn: its callback fills the other three.
    """
    pair = widgets.Choice("trophy_pair", t("Pair", "Par"), ["en", "pt"], lang(), kind="radio",
                          format_func={"en": "English", "pt": "Português"}.get, horizontal=True, on_change=load_pair)
    a, b, word = (widgets.Text(key, label, default, kind="text_input") for key, label, default in
                  zip(("trophy_a", "trophy_b", "trophy_word"), ("A", "B", t("Word", "Palavra")), TROPHY[pair.bind()],
                      strict=True))
    widgets.bind_all(a, b, word)
    if pair.draw() == "pt":
        st.caption(t("In Portuguese the pronoun would give the answer away: \"ele\" is the trophy (o troféu, "
                     "masculine), \"ela\" the suitcase (a mala, feminine). So the sentence leaves the subject "
                     "implicit, as Portuguese usually does, and the adjective agrees (\"pequena\" can only be the "
                     "suitcase). The word compared is the verb \"era\", the last word before the sentences differ.",
                     "Em português o pronome já entregaria a resposta: \"ele\" é o troféu, \"ela\" é a mala. Por "
                     "isso a frase omite o sujeito, como o português costuma fazer, e o adjetivo concorda "
                     "(\"pequena\" só pode ser a mala). Comparamos o verbo \"era\", a última palavra antes de as "
                     "frases divergirem."))
    c1, c2, c3 = st.columns([5, 5, 1])
    return a.draw(c1), b.draw(c2), word.draw(c3)


def problem(e: Exception) -> None:
    """A message that may quote the reader's sentences: a fixed warning, then the text (ui.messages) as plain
    text (st.text: no Markdown, no HTML), so `**`, `$` or `:red[...]` in a sentence stay as typed."""
    st.warning(t("These sentences cannot be compared:", "Não dá para comparar estas frases:"))
    st.text(messages.text(e))


def names() -> dict:
    """Chart and table titles in the UI language (viz.attention.NAMES keys)."""
    return {"query": "query", "key": "key", "query_axis": t("query (looking)", "query (quem olha)"),
            "key_axis": t("key (looked at)", "key (quem é olhado)"), "weight": t("weight", "peso"),
            "layer": t("layer", "camada"), "head": t("head", "cabeça"),
            "entropy": t("entropy (bits)", "entropia (bits)"), "previous": t("previous token", "token anterior"),
            "first": t("first token", "primeiro token"), "self": t("itself", "si mesmo"),
            "diff": t("max |difference|", "máx |diferença|"), "series": t("run", "execução")}


def cut_note(view: dict, m) -> str | None:
    """Why the attention page shows fewer tokens than the text has, or None."""
    return _cut_note(m, len(view["ids"]), view["n_total"], view["cut"])


def trophy_series(decoder: str, encoder: str, a: str, b: str, word: str,
                  masks) -> tuple[dict[str, list[float]], str | None]:
    """Per-layer max |difference| of the word's row: the decoder with each mask setting, then the encoder;
    and a notice for the page when the encoder is not downloaded (its series is then left out), else None.

    Raises ValueError (TrophyError, a model that cannot load) for the page to show (ui.messages.text).
    """
    series = {}
    for on in masks:
        label = t("decoder, mask on", "decoder, com máscara") if on else t("decoder, mask off", "decoder, sem máscara")
        series[label] = cached.trophy(decoder, a, b, word, on)["per_layer"]
    if not hub.is_available(encoder):
        return series, t(f"{encoder} is not downloaded here: pick it once in the sidebar to download it.",
                         f"{encoder} não está baixado aqui: escolha-o uma vez na barra lateral para baixá-lo.")
    series[f"encoder ({encoder})"] = cached.trophy(encoder, a, b, word, False)["per_layer"]
    return series, None
