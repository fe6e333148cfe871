"""What a page says when it shows fewer tokens than the text has (the attention and logit-lens pages)."""

from __future__ import annotations

from ui.i18n import num, t


def cut_note(m, shown: int, total: int, why: str | None) -> str | None:
    """Why `shown` of `total` tokens are used: "context" (the model reads no more) or "memory" (the attention
    page's weights), None when nothing was cut."""
    if why == "context":
        return t(f"{m.name} reads at most {num(m.context)} tokens: the first {num(shown)} of {num(total)} are used.",
                 f"{m.name} lê no máximo {num(m.context)} tokens: usamos os primeiros {num(shown)} de {num(total)}.")
    if why == "memory":
        return t(f"First {num(shown)} of {num(total)} tokens shown (memory): {m.n_layer} layers × {m.n_head} heads × "
                 f"{num(shown)}² weights is as much as this page keeps.",
                 f"Primeiros {num(shown)} de {num(total)} tokens mostrados (memória): {m.n_layer} camadas × "
                 f"{m.n_head} cabeças × {num(shown)}² pesos é o máximo que esta página guarda.")
    return None
