"""`python -m lab tokens FILE` and `python -m lab premium --en FILE --pt FILE`: what tokens cost.

    python -m lab tokens --json [--encoding NAME ...] FILE      (FILE '-' reads stdin)
    python -m lab premium --json --en FILE --pt FILE
    python -m lab premium --json --sample                       (the bundled parallel set)
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, read_text
from lab.encodings import ENCODINGS


def register(sub) -> None:
    """Add the `tokens` and `premium` commands."""
    p = sub.add_parser("tokens", help="tokens, words, characters per encoding for a text file")
    p.add_argument("file", metavar="FILE", help="UTF-8 text file, or - for stdin")
    p.add_argument("--encoding", action="append", metavar="NAME",
                   help=f"encoding to count with (repeatable; default: all of {', '.join(ENCODINGS)})")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_tokens)

    p = sub.add_parser("premium", help="Portuguese tokens / English tokens on parallel text")
    p.add_argument("--en", metavar="FILE", help="the English text (UTF-8 file, or -)")
    p.add_argument("--pt", metavar="FILE", help="the same text in Portuguese (UTF-8 file, or -)")
    p.add_argument("--sample", action="store_true", help="use the bundled English/Portuguese sample set")
    p.add_argument("--encoding", action="append", metavar="NAME", help="encoding (repeatable; default: all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_premium)


def _encodings(names: list[str] | None) -> tuple[str, ...]:
    """The requested encodings in the order given (duplicates dropped), or all; CliError if unknown."""
    names = tuple(dict.fromkeys(names or ENCODINGS))
    for name in names:
        if name not in ENCODINGS:
            raise CliError(f"unknown encoding {name!r}; choose from {', '.join(ENCODINGS)}")
    return names


def _num(x: float | None) -> float | str:
    """A ratio for the table: the float, or '—' when it is undefined."""
    return "—" if x is None else x


def run_tokens(args) -> int:
    """Print token costs of the whole file per encoding."""
    from lab.tokens import token_costs

    names = _encodings(args.encoding)
    costs = token_costs(read_text(args.file), names)
    if args.json:
        print_json({"encodings": costs})
    else:
        print_table(["encoding", "tokens", "words", "chars", "tokens/word", "chars/token"],
                    [[n, c["tokens"], c["words"], c["chars"], _num(c["tokens_per_word"]),
                      _num(c["chars_per_token"])] for n, c in costs.items()])
    return 0


def run_premium(args) -> int:
    """Print English tokens, Portuguese tokens and their ratio per encoding."""
    from lab.tokens import premium, sample_texts

    names = _encodings(args.encoding)
    if args.sample == bool(args.en or args.pt):
        raise CliError("give either --en FILE and --pt FILE, or --sample")
    if args.sample:
        en, pt = sample_texts()
    elif not (args.en and args.pt):
        raise CliError("give both --en FILE and --pt FILE")
    elif args.en == "-" and args.pt == "-":
        raise CliError("only one of --en and --pt can read stdin (-)")
    else:
        en, pt = read_text(args.en), read_text(args.pt)
    result = premium(en, pt, names)
    if args.json:
        print_json(result)
    else:
        print_table(["encoding", "en tokens", "pt tokens", "premium"],
                    [[n, r["en_tokens"], r["pt_tokens"], _num(r["premium"])] for n, r in result.items()])
    return 0
