"""`python -m lab attention` and `python -m lab trophy`: attention weights and the trophy experiment.

    python -m lab attention --json --model M --text T [--no-causal] [--max-floats N]  (or --file FILE)
    python -m lab trophy --json --model M [--no-causal] [--pair pt] [--a TEXT --b TEXT --word it]

The ids are exactly what the model's tokenizer gives: nothing is prepended (see docs/attention.md).
`attention --json` prints layers x heads x T x T floats; above MAX_FLOATS (20M: GPT-2 small at 372
tokens, ~0.4 GB of JSON) it refuses with exit 2 unless --max-floats allows more.
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, text_arg
from lab.cli.args import add_model_argument, add_text_arguments, fits, load_model_arg, the_text

MAX_FLOATS = 20_000_000  # attention --json refuses bigger arrays unless --max-floats says otherwise


def register(sub) -> None:
    """Add the `attention` and `trophy` commands."""
    p = sub.add_parser("attention", help="attention weights [layer, head, query, key] of one text")
    add_model_argument(p)
    add_text_arguments(p)
    p.add_argument("--no-causal", action="store_true", help="run a decoder without its causal mask")
    p.add_argument("--json", action="store_true", help="print JSON (the full array)")
    p.add_argument("--max-floats", type=int, default=MAX_FLOATS, metavar="N",
                   help=f"largest array --json prints, layers x heads x tokens^2 (default {MAX_FLOATS:,})")
    p.set_defaults(run=run_attention)

    p = sub.add_parser("trophy", help="attention row of a word in two sentences: bit for bit equal?")
    add_model_argument(p)
    p.add_argument("--pair", choices=("en", "pt"), default="en", help="the course's pair (default en)")
    p.add_argument("--a", type=text_arg, metavar="TEXT", help="first sentence (with --b)")
    p.add_argument("--b", type=text_arg, metavar="TEXT", help="second sentence (with --a)")
    p.add_argument("--word", type=text_arg, metavar="WORD", help="the word whose attention row is compared")
    p.add_argument("--no-causal", action="store_true", help="run a decoder without its causal mask")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_trophy)


def run_attention(args) -> int:
    """Print ids, tokens and the attention array (or a per-head summary table without --json)."""
    from lab import attention as lab
    from lab.text import encode, labels, token_texts

    text = the_text(args)
    loaded = load_model_arg(args.model)
    ids = encode(loaded.tokenizer, text)
    fits(len(ids), loaded)
    floats = loaded.n_layer * loaded.n_head * len(ids) ** 2
    if args.json and floats > args.max_floats:
        raise CliError(f"{len(ids)} tokens make {floats:,} attention weights ({loaded.n_layer} layers x "
                       f"{loaded.n_head} heads x {len(ids)}^2), more than --max-floats {args.max_floats:,}; "
                       "shorten the text or raise --max-floats")
    try:
        att = lab.attention(loaded.model, ids, causal=not args.no_causal)
    except ValueError as e:  # MaskUnsupported (GPT-1 without its mask), too long
        raise CliError(str(e)) from None
    tokens = token_texts(loaded.tokenizer, ids)
    if args.json:
        print_json({"ids": ids, "tokens": tokens, "n_layer": int(att.shape[0]), "n_head": int(att.shape[1]),
                    "attention": att.tolist()})
    else:
        print(" ".join(labels(tokens)))
        print_table(["layer", "head", "entropy (bits)", "previous", "first", "self"],
                    [[r["layer"], r["head"], r["entropy"], r["previous"], r["first"], r["self"]]
                     for r in lab.head_summary(att)])
    return 0


def run_trophy(args) -> int:
    """Print the max |difference| of the word's attention rows, overall and per layer."""
    from lab import causal

    if (args.a is None) != (args.b is None):
        raise CliError("--a and --b go together: give both sentences, or neither for the course's pair")
    a, b, word = causal.TROPHY[args.pair]
    if args.a is not None:
        a, b = args.a, args.b
    word = args.word if args.word is not None else word
    if not a.strip() or not b.strip():
        raise CliError("both sentences need some text")
    loaded = load_model_arg(args.model)
    try:
        result = causal.trophy(loaded.model, loaded.tokenizer, a, b, word, causal=not args.no_causal)
    except ValueError as e:  # TrophyError, MaskUnsupported, too long
        raise CliError(str(e)) from None
    if args.json:
        print_json(result)
    else:
        print(f"{word!r} is token {result['position']}; max |difference| {result['max_abs_diff']!r}")
        print_table(["layer", "max |difference|"], [[i, repr(d)] for i, d in enumerate(result["per_layer"])])
    return 0
