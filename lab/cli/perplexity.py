"""`python -m lab perplexity`: one text, several models, perplexity per token, per byte and per word.

    python -m lab perplexity --json --model M [--model M2 ...] --file F [--stride S]

prints {"results": [{"model", "tokens", "nll", "ppl", "bits_per_byte", "ppl_per_word"}, ...]}, an
encoder's entry with "pseudo": true (pseudo-perplexity; not comparable with a decoder's). The stride
defaults to half of each model's context. See lab/perplexity.py for the method.
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, read_text
from lab.cli.args import load_model_arg

FIELDS = ("model", "tokens", "nll", "ppl", "bits_per_byte", "ppl_per_word")


def register(sub) -> None:
    """Add the `perplexity` command."""
    from lab.models import DEFAULT_OFFLINE

    p = sub.add_parser("perplexity", help="perplexity of a text under one or more models, fairly normalised")
    p.add_argument("--model", action="append", metavar="NAME_OR_DIR",
                   help="a registry name or local Hugging Face directory; repeat for several "
                        f"(default {DEFAULT_OFFLINE})")
    p.add_argument("--file", required=True, metavar="FILE", help="a UTF-8 text file ('-' = stdin)")
    p.add_argument("--stride", type=int, default=None, metavar="S",
                   help="tokens the window moves each step (default: half of each model's context)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_perplexity)


def run_perplexity(args) -> int:
    """Evaluate each model in turn (one loaded at a time) and print the table or the JSON."""
    from lab.models import DEFAULT_OFFLINE
    from lab.perplexity import PerplexityError, evaluate

    text = read_text(args.file)
    if not text.strip():
        raise CliError(f"the text is empty: {args.file}")
    if args.stride is not None and args.stride <= 0:
        raise CliError(f"--stride must be a positive number of tokens; got {args.stride}")
    results = []
    for name in args.model or [DEFAULT_OFFLINE]:
        loaded = load_model_arg(name)
        if args.stride is not None and args.stride > loaded.context:
            raise CliError(f"--stride {args.stride} is above {loaded.name}'s context of {loaded.context} tokens")
        try:
            r = evaluate(loaded, text, args.stride)
        except PerplexityError as e:
            raise CliError(f"{loaded.name}: {e}") from None
        del loaded
        results.append({k: r[k] for k in FIELDS} | ({"pseudo": True} if r.get("pseudo") else {}))
    if args.json:
        print_json({"results": results})
    else:
        print_table(["model", "tokens", "ppl / token", "bits / byte", "ppl / word", "note"],
                    [[r["model"], r["tokens"], r["ppl"], r["bits_per_byte"], r["ppl_per_word"],
                      "pseudo (encoder)" if r.get("pseudo") else ""] for r in results])
    return 0
