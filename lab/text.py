"""Text <-> token ids, for every page and command that runs a model: one home.

`encode` gives the ids the model sees (the tokenizer's own output: nothing prepended for GPT-2 or
GPT-1, RoBERTa's own <s> ... </s>); `token_texts` each token's own text, with bytes that are only
part of a UTF-8 character shown as \\xc3; `labels` axis labels that keep repeated tokens apart;
`byte_decoder` GPT-2's byte-level alphabet reversed. (A model's kind and context: lab.models.)
"""

from __future__ import annotations

import functools

from lab.errors import LabError


class EmptyText(LabError):
    """Nothing to encode: reason "empty" (what: "text" or "prompt", as the message names it)."""

    reason_default = "empty"


def encode(tokenizer, text: str, what: str = "text") -> list[int]:
    """The ids the model sees for text: the tokenizer's own output (specials included, no extra BOS,
    no length warning on a long text). EmptyText for an empty or blank text."""
    if not text or not text.strip():
        raise EmptyText(f"the {what} is empty", what=what)
    return list(tokenizer(text, verbose=False)["input_ids"])


@functools.cache
def byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in character for each byte, reversed (char -> byte)."""
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    chars = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + n)
            n += 1
    return {c: b for b, c in chars.items()}


def token_texts(tokenizer, ids: list[int]) -> list[str]:
    """Each token's own text; bytes that are only part of a UTF-8 character appear as \\xc3."""
    pieces = tokenizer.convert_ids_to_tokens(list(ids))
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    if type(decoder).__name__ == "ByteLevel":  # GPT-2 / RoBERTa: each char stands for one byte
        table = byte_decoder()
        if all(c in table for p in pieces for c in p):
            return [bytes(table[c] for c in p).decode("utf-8", errors="backslashreplace") for p in pieces]
    return [tokenizer.convert_tokens_to_string([p]) for p in pieces]


def labels(texts: list[str]) -> list[str]:
    """Axis labels that keep repeated tokens apart: position, then the token (space ␣, newline ↵, tab ⇥)."""
    marks = str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥"})
    return [f"{i} {t.translate(marks)}" for i, t in enumerate(texts)]

