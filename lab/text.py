"""Text <-> token ids, for every page and command that runs a model: one home.

`encode` gives the ids the model sees (the tokenizer's own output: nothing prepended for GPT-2 or
GPT-1, RoBERTa's own <s> ... </s>); `token_texts` each token's own text, with bytes that are only
part of a UTF-8 character shown as \\xc3; `labels` axis labels that keep repeated tokens apart;
`byte_decoder` GPT-2's byte-level alphabet reversed. (A model's kind and context: lab.models.)
"""

from __future__ import annotations

import functools
import re
import unicodedata

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


MARKS = {" ": "␣", "\n": "↵", "\t": "⇥"}


def visible(text: str) -> str:
    """Whitespace and control characters made visible, the one way every page and chart shows them: space ␣,
    newline ↵, tab ⇥, other control characters as \\xNN (so " king" and "king" differ)."""
    return "".join(MARKS.get(c) or (f"\\x{ord(c):02x}" if unicodedata.category(c) == "Cc" else c) for c in text)


def labels(texts: list[str]) -> list[str]:
    """Axis labels that keep repeated tokens apart: position, then the token made visible."""
    return [f"{i} {visible(t)}" for i, t in enumerate(texts)]



def token_bytes(tokenizer, ids: list[int]) -> list[bytes]:
    """Each token's own bytes: GPT-2's byte-level pieces exactly; other tokenizers' text as UTF-8."""
    pieces = tokenizer.convert_ids_to_tokens(list(ids))
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    table = byte_decoder()
    if type(decoder).__name__ == "ByteLevel" and all(c in table for p in pieces for c in p):
        return [bytes(table[c] for c in p) for p in pieces]
    return [tokenizer.convert_tokens_to_string([p]).encode("utf-8") for p in pieces]


def _complete(data: bytes) -> bool:
    """True when data ends on a character boundary: no UTF-8 sequence left open at its end."""
    tail = data[-4:]
    for back in range(1, len(tail) + 1):
        b = tail[-back]
        if b < 0x80:
            return True
        if b >= 0xC0:  # a lead byte: how many bytes its character needs
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return back >= need
    return True  # only continuation bytes: nothing can complete them from here on


def spans_of(chunks: list[bytes], longest: int = 4) -> list[tuple[int, int]]:
    """(start, stop) runs of consecutive byte chunks that together end on a character boundary: a run of
    several chunks is one or more characters split across tokens. Runs stop at `longest` chunks."""
    runs, start, acc = [], 0, b""
    for i, chunk in enumerate(chunks):
        acc += chunk
        if _complete(acc) or i + 1 - start >= longest:
            runs.append((start, i + 1))
            start, acc = i + 1, b""
    if start < len(chunks):
        runs.append((start, len(chunks)))
    return runs


def readable(tokenizer, ids: list[int]) -> list[dict]:
    """Text as text: one record per run of tokens that makes whole characters (most runs are one token).

    Each {"text", "start", "stop", "joined"}: the run's decoded text, its token positions [start, stop),
    and joined=True when several tokens make it (a character the tokenizer split into bytes, as the
    course tokenizer does with "ã"). "".join of the texts is the tokenizer's own decode of ids.
    """
    chunks = token_bytes(tokenizer, ids)
    return [{"text": b"".join(chunks[a:z]).decode("utf-8", errors="backslashreplace"), "start": a, "stop": z,
             "joined": z - a > 1} for a, z in spans_of(chunks)]


def readable_texts(tokenizer, ids: list[int]) -> list[str]:
    """One text per token, for axes with a row per token: a token that is part of a split character
    shows the whole run's text marked with its part ("ã ·1/2", "ã ·2/2"); other tokens their own text."""
    out = []
    for run in readable(tokenizer, ids):
        n = run["stop"] - run["start"]
        out += [run["text"] + (f" ·{k + 1}/{n}" if n > 1 else "") for k in range(n)]
    return out


def readable_labels(tokenizer, ids: list[int]) -> list[str]:
    """labels() read as text, for heatmap axes: run_labels of lab.text.readable's runs."""
    return run_labels(readable(tokenizer, ids))


def run_labels(runs: list[dict]) -> list[str]:
    """One label per token, read as text: its position, then its run's text made visible and, for the tokens
    of one split character, its part ("6 ã ·1/2", "7 ã ·2/2"; labels over readable_texts would mark the space
    before "·" as ␣ too)."""
    out = []
    for run in runs:
        n = run["stop"] - run["start"]
        out += [f"{run['start'] + k} {visible(run['text'])}" + (f" ·{k + 1}/{n}" if n > 1 else "")
                for k in range(n)]
    return out


ESCAPED = re.compile(r"(?:\\x[0-9a-f]{2})+")  # token_texts' form of bytes that are only part of a character
COMMON = "ãçéáêóõíúâôàüñèöäßœ€—–“”’…•ºª°😀"  # the characters a lone byte is most likely a piece of, first


def byte_pieces(text: str) -> list[str | bytes]:
    """A token's text (token_texts' form) cut into text and runs of lone bytes: "␣\\xc3" -> [" ", b"\\xc3"]."""
    out, at = [], 0
    for m in ESCAPED.finditer(text):
        out += [text[at:m.start()]] if m.start() > at else []
        out.append(bytes(int(h, 16) for h in m.group().split("\\x")[1:]))
        at = m.end()
    return out + ([text[at:]] if at < len(text) else [])


def _size(lead: int) -> int:
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def byte_run(run: bytes) -> dict:
    """What a run of lone bytes is, for words a class reads: {"hex": "C3", "first": True when it starts a
    character, "size": bytes in that character (None for a run of later bytes), "examples": up to three
    characters it can be part of (Portuguese ones first)}. "\\xc3" -> first half of ã, ç, é."""
    first = run[0] >= 0xC0
    size = _size(run[0]) if first else None
    common = [c for c in COMMON if (c.encode().startswith(run) if first else c.encode()[1:].endswith(run))]
    if not common and first and run[0] < 0xF5:
        common = _printable_starting(run)
    if not common and not first:
        common = [bytes([0xC3, run[-1]]).decode()]
    return {"hex": " ".join(f"{b:02X}" for b in run), "first": first, "size": size, "examples": common[:3]}


@functools.cache
def _printable_starting(run: bytes) -> list[str]:
    """The first three printable characters whose UTF-8 starts with run (a lead byte and what follows it)."""
    size = _size(run[0])
    low = (run[0] & (0x7F >> size)) << 6 * (size - 1)  # the code points this lead byte can start
    found = []
    for cp in range(low, min(low + (1 << 6 * (size - 1)), 0x110000)):
        c = chr(cp)
        if not 0xD800 <= cp < 0xE000 and c.encode().startswith(run) and c.isprintable() and c.strip():
            found.append(c)
            if len(found) == 3:
                break
    return found
def check_fits(tokens: int, context: int, error: type = LabError, model: str | None = None, new: int = 0) -> None:
    """Raise `error` (reason "too_long", details: tokens, context, model, new) when `tokens` (plus `new` tokens
    to generate) do not fit a model's context: the one check and the one message for every text too long."""
    if tokens + new > context:
        more = f" and {new:,} new ones" if new else ""
        raise error(f"the text is {tokens:,} tokens{more}; {model or 'the model'} takes at most {context:,}",
                    "too_long", tokens=tokens, context=context, model=model, new=new)
