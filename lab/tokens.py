"""What tokenization costs: token counts per encoding, one record per token, the Portuguese premium.

For the tokens page (chapter 01) and `python -m lab tokens | premium`. The encodings are lab.encodings':
gpt2, cl100k_base, o200k_base and the course models' own ("course", GPT-2's first 7,935 merges).

Counting runs tiktoken once over the whole text per encoding (`encode_ordinary`, so a user's
"<|endoftext|>" is plain text); words are whitespace-separated (`str.split()`). Ratios that would
divide by zero (no words, no tokens, no English tokens) are None, shown as "—" and JSON null.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from lab.encodings import ENCODINGS, encoding

# The model each encoding was made for, and its context window in tokens.
CONTEXT = {"gpt2": ("GPT-2", 1024), "cl100k_base": ("GPT-4", 8192), "o200k_base": ("GPT-4o", 128_000),
           "course": ("the course models", 256)}

# Portuguese tokens / English tokens on FLORES-200, as reported by Petrov et al. (2023, and the
# authors' later figures for o200k_base), quoted in DESIGN.md. Nothing is published for "course".
PUBLISHED_PREMIUM = {"gpt2": 1.94, "cl100k_base": 1.48, "o200k_base": 1.23}

SAMPLE_FILE = Path(__file__).parent / "data" / "parallel_en_pt.json"

# A word for `costliest_words`: letters (accents included), optionally joined by - or ' (fazê-lo).
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")


def _ratio(num: float, den: float) -> float | None:
    """num / den, or None when den is zero."""
    return num / den if den else None


def token_costs(text: str, encodings=ENCODINGS) -> dict[str, dict]:
    """Per encoding: tokens, words, chars, tokens_per_word and chars_per_token of the whole text."""
    words, chars = len(text.split()), len(text)
    costs = {}
    for name in encodings:
        tokens = len(encoding(name).encode_ordinary(text))
        costs[name] = {"tokens": tokens, "words": words, "chars": chars,
                       "tokens_per_word": _ratio(tokens, words), "chars_per_token": _ratio(chars, tokens)}
    return costs


def shown(piece: bytes) -> str:
    """A token's bytes as text; bytes that are not a whole UTF-8 character appear as \\xc3."""
    return piece.decode("utf-8", errors="backslashreplace")


def token_records(name: str, text: str, limit: int | None = None) -> list[dict]:
    """One record per token (minGPT's encode_and_show_work): position, id, bytes, text, splits_char.

    `splits_char` is True when the token's bytes are not whole UTF-8 characters, i.e. the token
    holds part of a character such as "ã" (b"\\xc3\\xa3") and the next token holds the rest.
    With `limit`, records for the first `limit` tokens only (the whole text is still encoded).
    """
    enc = encoding(name)
    records = []
    for position, token_id in enumerate(enc.encode_ordinary(text)[:limit]):
        piece = enc.decode_single_token_bytes(token_id)
        try:
            piece.decode("utf-8")
            splits = False
        except UnicodeDecodeError:
            splits = True
        records.append({"position": position, "id": token_id, "bytes": piece,
                        "text": shown(piece), "splits_char": splits})
    return records


def premium(en_text: str, pt_text: str, encodings=ENCODINGS) -> dict[str, dict]:
    """Per encoding: English tokens, Portuguese tokens and premium = pt / en (None without English)."""
    result = {}
    for name in encodings:
        enc = encoding(name)
        en, pt = len(enc.encode_ordinary(en_text)), len(enc.encode_ordinary(pt_text))
        result[name] = {"en_tokens": en, "pt_tokens": pt, "premium": _ratio(pt, en)}
    return result


# Portuguese runs a little longer than English for the same content: across the 60 sample pairs the
# character ratio pt / en is 0.70-1.36 (median 1.05). Far outside that band the two boxes are probably
# not the same text, and the premium computed from them means nothing.
TRANSLATION_RATIO = (0.6, 1.7)


def length_mismatch(en_text: str, pt_text: str) -> float | None:
    """The pt / en character ratio when it is too far from 1 for a translation, else None."""
    en, pt = len(en_text.strip()), len(pt_text.strip())
    if not en or not pt:
        return None
    ratio = pt / en
    low, high = TRANSLATION_RATIO
    return ratio if not low <= ratio <= high else None


def words_in_window(cost: dict, window: int) -> int | None:
    """About how many words of this text fit in `window` tokens (one token_costs entry)."""
    per_word = cost["tokens_per_word"]
    return round(window / per_word) if per_word else None


def costliest_words(text: str, name: str, n: int = 10) -> list[dict]:
    """The n distinct words that cost the most tokens (word, tokens, pieces), first seen first on ties.

    Each word is encoded with a leading space, as it appears mid-sentence, punctuation excluded.
    """
    enc = encoding(name)
    rows = {}
    for word in _WORD.findall(text):
        if word not in rows:
            ids = enc.encode_ordinary(" " + word)
            rows[word] = {"word": word, "tokens": len(ids),
                          "pieces": [shown(enc.decode_single_token_bytes(i)) for i in ids]}
    return sorted(rows.values(), key=lambda r: -r["tokens"])[:n]


@cache
def _data() -> dict:
    """The bundled parallel set, read once."""
    return json.loads(SAMPLE_FILE.read_text(encoding="utf-8"))


def _sample() -> list[tuple[str, str]]:
    """The bundled pairs as (en, pt) tuples."""
    return [(p["en"], p["pt"]) for p in _data()["pairs"]]


def course_passage() -> dict[str, str]:
    """The page's default text: the course's trophy sentence and what follows, in en and pt."""
    return dict(_data()["course_passage"])


def sample_pairs() -> list[dict[str, str]]:
    """The bundled parallel set: English / Brazilian Portuguese pairs written by the project."""
    return [{"en": en, "pt": pt} for en, pt in _sample()]


def sample_texts() -> tuple[str, str]:
    """The whole sample set as two texts (English, Portuguese), one pair per line."""
    pairs = _sample()
    return "\n".join(en for en, _ in pairs), "\n".join(pt for _, pt in pairs)


def sample_premium(encodings=ENCODINGS) -> dict[str, dict]:
    """The corpus-level premium of the bundled set: all Portuguese tokens / all English tokens."""
    en, pt = sample_texts()
    return premium(en, pt, encodings)
