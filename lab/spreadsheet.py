"""A table written as CSV that opens right in a spreadsheet in the reader's language, and read back (issue 56). No
Streamlit here; lab.questions (the teacher's export) and the guessing game's export write through it.

write(columns, rows, lang): the header names the columns in `lang` (HEADERS; a key not there is written as given),
UTF-8 with a byte-order mark first (so Excel reads the accents), line ends "\\n". English: "," between cells and a
decimal point; Portuguese: ";" between cells and a decimal comma (a Brazilian spreadsheet's own settings, which read
"0,8333" as a number). A cell by its type:
- float: plain decimal, never an exponent; rounded (half up) to SIGNIFICANT (4) significant digits, but the digits
  left of the decimal point are never rounded away; trailing zeros and a bare point dropped. 0.833333 -> "0.8333",
  2e-05 -> "0.00002", 0.072314 -> "0.07231", 2.98e-33 -> "0.00000000000000000000000000000000298", 24.0 -> "24",
  12345.67 -> "12346"; in Portuguese "0,8333". Not finite (nan, inf): empty.
- decimal.Decimal: exactly as it is, plain, in the language's decimal mark (a number a student typed, kept whole).
- bool: a word, true/false or verdadeiro/falso. int: its digits, no thousands separator. None: empty.
- text (anything else, as str): after a ' when it starts with =, +, -, @, a tab or a carriage return (OWASP's
  advice on CSV injection: a spreadsheet would run it as a formula); every text cell, the header's too.
read(text): the rows of such a table, or of a plain English CSV, as {English key: the cell's raw text}: a
byte-order mark dropped, the separator sniffed from the header line (";" when it has more ";" than ","), either
language's header names (any case, accents optional) mapped to the English key, other columns kept under their own
name. table(text) gives the keys and each row's line number too. number(cell): a numeric cell of either language.
unguard(cell): a text cell as it was before write's '.
"""

from __future__ import annotations

import csv
import decimal
import io
import math
import unicodedata
from collections.abc import Iterator

SIGNIFICANT = 4  # a float's significant digits (a probability's: 0.8333)
BOM = "\ufeff"
SEPARATORS = {"en": ",", "pt": ";"}
DECIMAL_MARKS = {"en": ".", "pt": ","}
WORDS = {"en": ("true", "false"), "pt": ("verdadeiro", "falso")}
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a text cell starting so is a formula to a spreadsheet
HEADERS = {  # every column an export writes: {key: (English, Portuguese)}
    "question": ("question", "pergunta"),
    "round": ("round", "rodada"),
    "answer": ("answer", "resposta"),
    "option": ("option", "opção"),
    "count": ("count", "contagem"),
    "model_probability": ("model_probability", "probabilidade_do_modelo"),
    "right": ("right", "certa"),
    "true_value": ("true_value", "valor_verdadeiro"),
    "position": ("position", "posição"),
    "word": ("word", "palavra"),
    "true_word": ("true_word", "palavra_verdadeira"),
    "class_probability": ("class_probability", "probabilidade_da_turma"),
    "class_bits": ("class_bits", "bits_da_turma"),
    "model_bits": ("model_bits", "bits_do_modelo"),
}
_LANGS = tuple(SEPARATORS)


def _float(value: float) -> str:
    """A float in plain decimal, SIGNIFICANT digits (the module docstring's rule), with a point."""
    if not math.isfinite(value):
        return ""
    if value == 0:
        return "0"
    exact = decimal.Decimal(repr(value))  # the shortest text that reads back as this float
    places = max(0, SIGNIFICANT - 1 - exact.adjusted())
    with decimal.localcontext(decimal.Context(prec=1000)):
        rounded = exact.quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_UP)
    return _plain(rounded)


def _plain(value: decimal.Decimal) -> str:
    """A Decimal written plainly (no exponent), trailing zeros and a bare point dropped."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def cell(value, lang: str) -> str:
    """One cell's text in `lang` (the module docstring's rules by type)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return WORDS[lang][0 if value else 1]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float | decimal.Decimal):
        text = _float(value) if isinstance(value, float) else _plain(value)
        return text.replace(".", DECIMAL_MARKS[lang])
    text = str(value)
    return "'" + text if text.startswith(FORMULA) else text


def write(columns: list[str], rows: list[list], lang: str) -> str:
    """The table as CSV for a spreadsheet in `lang` ("en" or "pt"): the header in `lang`, then one line per row."""
    if lang not in _LANGS:
        raise ValueError(f"lang must be one of {_LANGS}")
    out = io.StringIO()
    writer = csv.writer(out, delimiter=SEPARATORS[lang], lineterminator="\n")
    names = [HEADERS[c][_LANGS.index(lang)] if c in HEADERS else c for c in columns]
    writer.writerow([cell(name, lang) for name in names])
    for row in rows:
        writer.writerow([cell(value, lang) for value in row])
    return BOM + out.getvalue()


def _folded(name: str) -> str:
    """A header name compared: trimmed, lower case, accents dropped ("Posição" -> "posicao")."""
    parts = unicodedata.normalize("NFKD", name.strip().lower())
    return "".join(c for c in parts if not unicodedata.combining(c))


_KEYS = {_folded(name): key for key, names in HEADERS.items() for name in names}


def table(text: str) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """The header's keys (English where HEADERS knows the name, else the name as given) and an iterator over the
    rows: (the line the row ends on, the header being line 1; {key: the cell's raw text}). A short row lacks its
    last keys; cells past the header's are dropped. csv.Error (from the iterator) on text csv cannot read."""
    text = text[1:] if text.startswith(BOM) else text
    first = text.split("\n", 1)[0]
    separator = ";" if first.count(";") > first.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    header = next(reader, [])
    keys = [_KEYS.get(_folded(name), name) for name in header]

    def rows():
        for record in reader:
            if record:
                yield reader.line_num, dict(zip(keys, record, strict=False))

    return keys, rows()


def read(text: str) -> list[dict[str, str]]:
    """The rows of a table write() wrote (either language) or of a plain English CSV, keyed by English keys."""
    return [row for _, row in table(text)[1]]


def number(cell: str) -> float:
    """A numeric cell of either language ("0,8333" or "0.8333") as a float. ValueError when it is not one."""
    text = cell.strip()
    if "," in text and "." in text:
        raise ValueError(f"{cell!r} has both a decimal point and a decimal comma")
    return float(text.replace(",", "."))


def unguard(cell: str) -> str:
    """A text cell as it was before write() put a ' before a formula's first character."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA) else cell
