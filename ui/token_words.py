"""A token drawn alone, in words a class reads: a token that is only part of a character (course-gpt2 often
predicts the byte C3, the first half of ã, ç, é) is named as that byte and what it starts or ends, in the UI
language, never as \\xc3. Tokens drawn in a row read split characters whole (lab.text.readable_texts); these
are for tokens drawn one by one: a prediction, a candidate, a neighbour."""

from __future__ import annotations

from lab.text import byte_pieces, byte_run, visible
from ui.i18n import t


def _run_words(run: bytes) -> str:
    r = byte_run(run)
    name = ("byte " if len(run) == 1 else "bytes ") + r["hex"]
    ex = ", ".join(r["examples"]) + "…"
    if not r["examples"]:
        return t(f"{name} (part of a character with no printed form)", f"{name} (parte de um caractere sem forma "
                 "impressa)")
    if not r["first"]:
        return t(f"{name} (end of {ex})", f"{name} (final de {ex})")
    if r["size"] == 2:
        return t(f"{name} (first half of {ex})", f"{name} (primeira metade de {ex})")
    if len(run) == 1:
        return t(f"{name} (first of {r['size']} bytes of {ex})", f"{name} (o primeiro de {r['size']} bytes de {ex})")
    return t(f"{name} (first {len(run)} of {r['size']} bytes of {ex})",
             f"{name} (os primeiros {len(run)} de {r['size']} bytes de {ex})")


NBSP = "\u00a0"  # the words' own spaces: a view that marks a token's spaces (␣) leaves them, and they never wrap


def worded(text: str, marked: bool = False) -> str:
    """A token's own text (lab.text.token_texts' form) with each run of lone bytes in words: "\\xc3" ->
    "byte C3 (first half of ã, ç, é…)" (its spaces no-break spaces); " \\xc3" keeps its space. Other text is
    returned as it is. `marked`: the token's own spaces, newlines and tabs shown as ␣ ↵ ⇥ too."""
    return "".join((visible(p) if marked else p) if isinstance(p, str) else _run_words(p).replace(" ", NBSP)
                   for p in byte_pieces(text))


def short(text: str) -> str:
    """The same for a cell with room for a few characters: "byte C3"; other text as it is."""
    return "".join(p if isinstance(p, str) else (("byte " if len(p) == 1 else "bytes ") + byte_run(p)["hex"]).replace(
        " ", NBSP) for p in byte_pieces(text))


def worded_array(tokens, marked: bool = False):
    """worded over an array of token texts (the logit lens's cells), same shape."""
    import numpy as np

    return np.vectorize(lambda x: worded(x, marked), otypes=[object])(tokens)


def short_array(tokens):
    """short over an array of token texts, same shape."""
    import numpy as np

    return np.vectorize(short, otypes=[object])(tokens)
