"""How one page input travels in a link's query string: URL text -> value and back (no Streamlit here).

A `Codec` parses what a URL says (raising LinkValueError, a ValueError with a reason code and details,
on anything unusable: the page words the notice in the reader's language), writes a value back as
URL text, and says whether a value kept in the session is still valid (a range that depends on the
model or the text may have shrunk). Parsing never raises anything but LinkValueError.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

MAX_LINK_TEXT = 2_000  # characters of one text a link carries; longer texts stay out of the URL
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")  # ASCII digits only: int() also takes "١٢" and "1_000"
_REAL_CHARS = 40  # no decimal a page uses is longer than this


class LinkValueError(ValueError):
    """A URL value a page cannot use: `reason` (a code) and `details`, for a notice in either language."""

    def __init__(self, reason: str, **details):
        super().__init__(f"{reason} {details}")
        self.reason, self.details = reason, details


@dataclass(frozen=True)
class Codec:
    """parse: URL text -> value (LinkValueError); format: value -> URL text (None: it cannot travel);
    accepts: whether a value held in the session is valid here; shape: the widget's range or options
    (when it changes, Streamlit draws a new widget, which url_state.bind must hand the value)."""

    parse: Callable[[str], Any]
    format: Callable[[Any], str | None]
    accepts: Callable[[Any], bool]
    shape: Any = None
    kind: str = ""  # "choice", "choices", "integer", "real", "boolean", "text": what a lesson file may give it


def choice(options: Iterable) -> Codec:
    """One of `options`, written as str(option) (ints and floats too: "3", "0.5")."""
    by_text = {str(o): o for o in options}

    def parse(s: str):
        if s not in by_text:
            raise LinkValueError("unknown_choice")
        return by_text[s]

    return Codec(parse, str, lambda v: _is_option(v, by_text), shape=tuple(by_text),
                 kind="choice")


def choices(options: Iterable) -> Codec:
    """A list of distinct `options` (a multiselect), written comma-separated; "" is the empty list."""
    by_text = {str(o): o for o in options}

    def parse(s: str) -> list:
        picked = []
        for part in s.split(",") if s else []:
            if part not in by_text:
                raise LinkValueError("unknown_choice")
            if by_text[part] not in picked:
                picked.append(by_text[part])
        return picked

    return Codec(parse, lambda v: ",".join(map(str, v)),
                 lambda v: isinstance(v, list) and all(_is_option(x, by_text) for x in v), shape=tuple(by_text),
                 kind="choices")


def integer(lo: int, hi: int) -> Codec:
    """A whole number from lo to hi, inclusive (an empty range when hi < lo: nothing is accepted)."""
    def parse(s: str) -> int:
        s = s.strip()  # str.strip takes more than int() forgives (a "0\x1f" from a fuzzed link)
        if not _INTEGER.fullmatch(s):
            raise LinkValueError("not_integer")
        v = int(s)
        if not lo <= v <= hi:
            raise LinkValueError("out_of_range", lo=lo, hi=hi)
        return v

    return Codec(parse, lambda v: str(int(v)),
                 lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi, shape=(lo, hi),
                 kind="integer")


def real(lo: float, hi: float, least: float = 0.0) -> Codec:
    """A finite number from lo to hi, inclusive; NaN and infinities (1e999) are refused, and so are numbers
    between 0 and `least` (a temperature of 1e-320 is no slider's value and overflows the logits)."""
    def parse(s: str) -> float:
        if len(s) > _REAL_CHARS:
            raise LinkValueError("not_number")
        try:
            v = float(s)
        except ValueError:
            raise LinkValueError("not_number") from None
        if not math.isfinite(v):
            raise LinkValueError("not_finite")
        if not lo <= v <= hi:
            raise LinkValueError("out_of_range", lo=lo, hi=hi)
        if 0 < abs(v) < least:
            raise LinkValueError("near_zero", least=least)
        return v

    def accepts(v) -> bool:
        return (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and lo <= v <= hi
                and not 0 < abs(v) < least)

    return Codec(parse, lambda v: format(float(v), ".10g"), accepts, shape=(lo, hi, least), kind="real")


def boolean() -> Codec:
    """On or off, written "true"/"false"; also reads 1/0, yes/no, on/off (any case)."""
    words = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}

    def parse(s: str) -> bool:
        if s.strip().lower() not in words:
            raise LinkValueError("not_boolean")
        return words[s.strip().lower()]

    return Codec(parse, lambda v: "true" if v else "false", lambda v: isinstance(v, bool), kind="boolean")


def text(max_chars: int = MAX_LINK_TEXT) -> Codec:
    """Free text of at most max_chars characters in a link; a longer text is valid on the page but
    does not travel (format gives None), and a longer one in a URL is refused."""
    def parse(s: str) -> str:
        if len(s) > max_chars:
            raise LinkValueError("too_long", max=max_chars, length=len(s))
        return s

    return Codec(parse, lambda v: v if len(v) <= max_chars else None, lambda v: isinstance(v, str),
                 shape=(max_chars,), kind="text")


def _is_option(v, by_text: dict) -> bool:
    """Whether v is one of the options (by its text, so that True never passes for 1)."""
    return type(by_text.get(str(v), object())) is type(v) and by_text[str(v)] == v
