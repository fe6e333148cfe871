"""`python -m lab fill`: fill in the blank with an encoder, or compare it with a decoder token by token (ch. 09-11).

    python -m lab fill --json --model M --text "… <mask> …" [--top K] [--in-order]
    python -m lab fill --json --model ENCODER --compare DECODER --text T

The first prints {"masks": [{"position", "candidates": [{"id", "token", "p"}]}]}: one entry per mask, each filled
on its own (one pass with every mask in place, as transformers' fill-mask pipeline does); with --in-order the
masks are filled left to right instead, each entry adding "chosen". The second prints {"positions": [{"token",
"encoder_p", "encoder_rank", "decoder_p", "decoder_rank"}]}: each token's probability when it alone is masked
(both sides visible) beside the decoder's from the left only (null for the first token). See lab/fill.py.
"""

from __future__ import annotations

import json

from lab.cli import CliError, print_json, print_table
from lab.cli.args import add_model_argument, add_text_arguments, load_model_arg, the_text


def register(sub) -> None:
    """Add the `fill` and `history` commands."""
    p = sub.add_parser("fill", help="an encoder fills <mask>; or encoder vs decoder on every token (--compare)")
    add_model_argument(p, default="course-roberta")
    add_text_arguments(p, "the text, with <mask> or [MASK] to fill")
    p.add_argument("--top", type=int, default=5, metavar="K", help="candidates per mask (default 5)")
    p.add_argument("--in-order", action="store_true", help="fill the masks one after another, left to right")
    p.add_argument("--compare", metavar="DECODER", help="a decoder to compare with, token by token (no mask)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_fill)
    h = sub.add_parser("history", help="GPT-1 -> GPT-2 decision by decision: the papers' figures with sources, "
                                       "the shapes, the layer norms (the fill page's table)")
    h.add_argument("--json", action="store_true", help="print JSON")
    h.set_defaults(run=run_history)


def run_history(args) -> int:
    """Print the fill page's GPT-1 -> GPT-2 table, every figure with where it was read."""
    from lab import recipes

    r = recipes.gpt_history()
    if args.json:
        print_json(r)
        return 0
    for name, figures in r["papers"].items():
        print_table(["figure", name], [[k, v] for k, v in figures.items()])
    return 0


def run_fill(args) -> int:
    """Fill the masks, or compare the two models, and print the result."""
    from lab import fill

    text = the_text(args)
    if not 1 <= args.top <= 100:
        raise CliError(f"--top must be from 1 to 100, not {args.top}")
    encoder = load_model_arg(args.model)
    decoder = load_model_arg(args.compare) if args.compare else None
    try:
        if decoder is not None:
            r = fill.compare(encoder, decoder, text)
        else:
            r = (fill.fill_in_order if args.in_order else fill.fill)(encoder, text, args.top)
            r.pop("ids", None)
    except fill.FillError as e:
        raise CliError(str(e)) from None
    if args.json:
        print_json(r)
    elif decoder is not None:
        print_table(["token", f"p {encoder.name}", "rank", f"p {decoder.name}", "rank"],
                    [[json.dumps(x["token"], ensure_ascii=False), x["encoder_p"], x["encoder_rank"], x["decoder_p"],
                      x["decoder_rank"]] for x in r["positions"]])
    else:
        for m in r["masks"]:
            print(f"mask at token {m['position']}" + (f", filled with {m['chosen']!r}" if "chosen" in m else ""))
            print_table(["id", "token", "p"], [[c["id"], json.dumps(c["token"], ensure_ascii=False), c["p"]]
                                               for c in m["candidates"]])
    return 0
