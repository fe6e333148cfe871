"""How one page input travels as text: in a link's query string, and in a lesson file (no Streamlit here).

One set of rules for both (issue 51). A `Codec` parses what a link says (raising LinkValueError, a LabError with a
reason code and details, on anything unusable: the page words the notice in the reader's language), writes a
value back as link text, and says whether a value kept in the session is still valid (a range that depends on
the model or the text may have shrunk). Parsing never raises anything but LinkValueError.

The rules, the same everywhere:
- booleans read `true/false`, `1/0`, `yes/no`, `on/off` in any case (and spaces around), and are written
  `true`/`false`;
- whole numbers are ASCII digits with an optional sign (18 at most: int() also takes "١٢" and "1_000"); real
  numbers are what float() reads, finite, at most 40 characters, written with 10 significant digits ("0.7", "0");
- a list is its items' texts joined by commas ("" is the empty list); text is itself, up to a length.

A lesson file (lab/lessons.py) gives YAML values: `to_link` writes one as the link of its input writes it, and the
input's own codec, rebuilt from the catalogue's description of it (`describe` / `from_spec`), checks it; a value
recorded from a link goes back into a file with `from_link`. So a value written to a link and read back, or
written to a lesson and read back, is the same (tests/test_link_codec.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lab.errors import LabError

MAX_LINK_TEXT = 2_000  # characters of one text a link carries; longer texts stay out of the URL
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")  # ASCII digits only: int() also takes "١٢" and "1_000"
_REAL_CHARS = 40  # no decimal a page uses is longer than this
BOOLEANS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}
KINDS = ("choice", "choices", "integer", "real", "boolean", "text")


class LinkValueError(LabError):
    """A link value (or a lesson's) an input cannot take; the page words its notice in the reader's language
    (ui/messages.py). Reasons: "not_boolean", "not_integer", "not_number", "not_finite", "unknown_choice",
    "out_of_range" (details lo, hi), "near_zero" (least), "too_long" (max, length)."""


_WORDS = {"not_boolean": "not true or false", "not_integer": "not a whole number", "not_number": "not a number",
          "not_finite": "not a finite number", "unknown_choice": "not one of the options",
          "out_of_range": "out of range {lo}..{hi}", "near_zero": "neither 0 nor at least {least}",
          "too_long": "{length} characters, longer than {max}"}


def refused(reason: str, **details) -> LinkValueError:
    """The error for a value refused for `reason` (one of _WORDS), its English line made from the details."""
    return LinkValueError(_WORDS[reason].format(**details), reason, **details)


# The readers and writers of each kind, with no range: the codecs below add the range or the options.
def read_boolean(s: str) -> bool:
    """On or off (BOOLEANS, any case, spaces around); LinkValueError("not_boolean") for anything else."""
    word = s.strip().lower()
    if word not in BOOLEANS:
        raise refused("not_boolean")
    return BOOLEANS[word]


def write_boolean(v) -> str:
    return "true" if v else "false"


def read_integer(s: str) -> int:
    """A whole number in ASCII digits, spaces around allowed (str.strip takes more than int() forgives: a "0\\x1f"
    from a fuzzed link)."""
    s = s.strip()
    if not _INTEGER.fullmatch(s):
        raise refused("not_integer")
    return int(s)


def read_real(s: str) -> float:
    """A finite number: NaN and infinities (1e999) are refused."""
    if len(s) > _REAL_CHARS:
        raise refused("not_number")
    try:
        v = float(s)
    except ValueError:
        raise refused("not_number") from None
    if not math.isfinite(v):
        raise refused("not_finite")
    return v


def write_real(v) -> str:
    return format(float(v), ".10g")


def read_list(s: str) -> list[str]:
    """Comma-separated items; "" is the empty list."""
    return s.split(",") if s else []


def write_list(v) -> str:
    return ",".join(map(str, v))


@dataclass(frozen=True)
class Codec:
    """parse: URL text -> value (LinkValueError); format: value -> URL text (None: it cannot travel);
    accepts: whether a value held in the session is valid here; shape: the widget's range or options
    (when it changes, Streamlit draws a new widget, which url_state.bind must hand the value)."""

    parse: Callable[[str], Any]
    format: Callable[[Any], str | None]
    accepts: Callable[[Any], bool]
    shape: Any = None
    kind: str = ""  # one of KINDS: what a lesson file may give it


def choice(options: Iterable) -> Codec:
    """One of `options`, written as str(option) (ints and floats too: "3", "0.5")."""
    by_text = {str(o): o for o in options}

    def parse(s: str):
        if s not in by_text:
            raise refused("unknown_choice")
        return by_text[s]

    return Codec(parse, str, lambda v: _is_option(v, by_text), shape=tuple(by_text), kind="choice")


def choices(options: Iterable) -> Codec:
    """A list of distinct `options` (a multiselect), written comma-separated; "" is the empty list."""
    by_text = {str(o): o for o in options}

    def parse(s: str) -> list:
        picked = []
        for part in read_list(s):
            if part not in by_text:
                raise refused("unknown_choice")
            if by_text[part] not in picked:
                picked.append(by_text[part])
        return picked

    return Codec(parse, write_list, lambda v: isinstance(v, list) and all(_is_option(x, by_text) for x in v),
                 shape=tuple(by_text), kind="choices")


def integer(lo: int, hi: int) -> Codec:
    """A whole number from lo to hi, inclusive (an empty range when hi < lo: nothing is accepted)."""
    def parse(s: str) -> int:
        v = read_integer(s)
        if not lo <= v <= hi:
            raise refused("out_of_range", lo=lo, hi=hi)
        return v

    return Codec(parse, lambda v: str(int(v)),
                 lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi, shape=(lo, hi),
                 kind="integer")


def real(lo: float, hi: float, least: float = 0.0) -> Codec:
    """A finite number from lo to hi, inclusive; numbers between 0 and `least` are refused (a temperature of
    1e-320 is no slider's value and overflows the logits)."""
    def parse(s: str) -> float:
        v = read_real(s)
        if not lo <= v <= hi:
            raise refused("out_of_range", lo=lo, hi=hi)
        if 0 < abs(v) < least:
            raise refused("near_zero", least=least)
        return v

    def accepts(v) -> bool:
        return (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and lo <= v <= hi
                and not 0 < abs(v) < least)

    return Codec(parse, write_real, accepts, shape=(lo, hi, least), kind="real")


def boolean() -> Codec:
    """On or off, written "true"/"false"; also reads 1/0, yes/no, on/off (any case)."""
    return Codec(read_boolean, write_boolean, lambda v: isinstance(v, bool), kind="boolean")


def text(max_chars: int = MAX_LINK_TEXT) -> Codec:
    """Free text of at most max_chars characters in a link; a longer text is valid on the page but
    does not travel (format gives None), and a longer one in a URL is refused."""
    def parse(s: str) -> str:
        if len(s) > max_chars:
            raise refused("too_long", max=max_chars, length=len(s))
        return s

    return Codec(parse, lambda v: v if len(v) <= max_chars else None, lambda v: isinstance(v, str),
                 shape=(max_chars,), kind="text")


def _is_option(v, by_text: dict) -> bool:
    """Whether v is one of the options (by its text, so that True never passes for 1)."""
    return type(by_text.get(str(v), object())) is type(v) and by_text[str(v)] == v


# A codec described as data (lab/data/lesson_inputs.json keeps every page's inputs so), and rebuilt from it.
def describe(codec: Codec, default) -> dict:
    """A codec as the lessons' catalogue keeps it: its kind, range or options and default (link text; a text's
    default is the UI language's, so none is kept)."""
    shape = codec.shape
    if codec.kind == "text":
        return {"kind": "text", "max": shape[0]}
    if codec.kind in ("choice", "choices"):
        spec = {"kind": codec.kind, "options": list(shape)}
    elif codec.kind == "integer":
        spec = {"kind": "integer", "lo": shape[0], "hi": shape[1]}
    elif codec.kind == "real":
        spec = {"kind": "real", "lo": shape[0], "hi": shape[1], "least": shape[2]}
    else:
        spec = {"kind": codec.kind}
    return spec | {"default": codec.format(default)}


def from_spec(spec: dict) -> Codec:
    """The codec a catalogue entry describes (its options are their link texts)."""
    kind = spec["kind"]
    if kind == "text":
        return text(spec["max"])
    if kind in ("choice", "choices"):
        return (choice if kind == "choice" else choices)(spec["options"])
    if kind == "integer":
        return integer(spec["lo"], spec["hi"])
    if kind == "real":
        return real(spec["lo"], spec["hi"], spec.get("least", 0.0))
    if kind == "boolean":
        return boolean()
    raise ValueError(f"no codec of kind {kind!r}")


# A lesson file's values (YAML: true, 3, 0.7, "text", [a, b]) and link text, both ways.
def _scalar(v) -> bool:
    return isinstance(v, int | float | str) and not isinstance(v, bool)


def to_link(value, kind: str = "") -> str | None:
    """A lesson file's value as the link of an input of this kind writes it: true/false, a whole float as a whole
    number ("2.0" -> "2"), a real with 10 significant digits, a list comma-separated; None for what no link
    carries (None, a mapping, a list of lists or booleans)."""
    if isinstance(value, bool):
        return write_boolean(value)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return str(int(value))
    if kind == "real" and _scalar(value) and not isinstance(value, str):
        return write_real(value)
    if _scalar(value):
        return str(value)
    if isinstance(value, list) and all(_scalar(v) for v in value):
        return write_list(value)
    return None


def from_link(s: str, kind: str):
    """Link text as a lesson file writes a value of this kind: 3, 0.7, true, [a, b] or text (text that the kind
    cannot read stays text, for the lesson's check to name)."""
    readers = {"integer": read_integer, "real": read_real, "boolean": read_boolean, "choices": read_list}
    try:
        return readers[kind](s) if kind in readers else s
    except LinkValueError:
        return s
