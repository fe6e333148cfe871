"""`python -m lab next` and `python -m lab sample`: the next-token distribution and seeded sampling (ch. 07).

    python -m lab next --json --model M --prompt P [--temperature T] [--top-k K] [--top-p P] [--top N]
    python -m lab sample --json --model M --prompt P --seed S --max-new-tokens N [--temperature T]
                         [--top-k K] [--top-p P]

Filters as transformers' `generate` applies them: temperature (0 = greedy), then top-k (0 = off),
then top-p (1 = off), over the whole vocabulary. `next` prints the N most probable raw candidates
(`p_raw` at temperature 1, `p_filtered` after every filter, 0 when removed); `sample` prints the
new text and each new token with the probability it had when drawn, and `runs` (lab.text.readable over
the new ids: {text, start, stop, joined}, the chips the sampling page shows, a character split across
byte tokens as one run). The ids are exactly what the tokenizer gives; `text` is the continuation only
(the prompt is not repeated).
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, text_arg
from lab.cli.args import add_model_argument, decoder, load_model_arg
from lab.text import encode, readable, token_texts


def _number(value: str) -> float:
    """A float argument; NaN and infinities pass through to the range checks, which refuse them."""
    try:
        return float(value)
    except ValueError:
        raise CliError(f"not a number: {value!r}") from None


def _whole(value: str) -> int:
    """An int argument, with one clear line when it is not one."""
    try:
        return int(value)
    except ValueError:
        raise CliError(f"not a whole number: {value!r}") from None


def _filters(p) -> None:
    """Add --temperature, --top-k and --top-p."""
    p.add_argument("--prompt", type=text_arg, required=True, help="the text to continue")
    p.add_argument("--temperature", type=_number, default=1.0, metavar="T", help="0 = greedy (default 1)")
    p.add_argument("--top-k", type=_whole, default=0, metavar="K", help="keep the K most likely tokens (0 = off)")
    p.add_argument("--top-p", type=_number, default=1.0, metavar="P",
                   help="keep the smallest set of tokens whose probability reaches P (1 = off)")
    p.add_argument("--json", action="store_true", help="print JSON")


def register(sub) -> None:
    """Add the `next` and `sample` commands."""
    p = sub.add_parser("next", help="the next-token distribution of a prompt, raw and after the filters")
    add_model_argument(p)
    _filters(p)
    p.add_argument("--top", type=_whole, default=50, metavar="N", help="how many candidates (default 50)")
    p.set_defaults(run=run_next)

    p = sub.add_parser("sample", help="continue a prompt, token by token, with a seed")
    add_model_argument(p)
    _filters(p)
    p.add_argument("--seed", type=_whole, required=True, metavar="S", help="the same seed gives the same text")
    p.add_argument("--max-new-tokens", type=_whole, required=True, metavar="N", help="how many tokens to add")
    p.set_defaults(run=run_sample)


def _load_decoder(args):
    """Check the filters first (cheap), then load the model; CliError for bad input or an encoder."""
    from lab import sampling

    try:
        sampling.check(args.temperature, args.top_k, args.top_p)
    except sampling.SamplingError as e:
        raise CliError(str(e)) from None
    if not args.prompt.strip():
        raise CliError("the prompt is empty")
    loaded = load_model_arg(args.model)
    decoder(loaded, "sampling")
    return loaded


def run_next(args) -> int:
    """Print ids, tokens and the top candidates with p_raw and p_filtered."""
    from lab import sampling

    if args.top < 1:
        raise CliError(f"--top must be at least 1, not {args.top}")
    loaded = _load_decoder(args)
    try:
        ids = encode(loaded.tokenizer, args.prompt, "prompt")
        step = sampling.next_token(loaded.model, ids, args.temperature, args.top_k, args.top_p, args.top)
    except sampling.SamplingError as e:
        raise CliError(str(e)) from None
    c = step["candidates"]
    words = token_texts(loaded.tokenizer, c["id"])
    rows = [{"id": i, "token": w, "p_raw": r, "p_filtered": f}
            for i, w, r, f in zip(c["id"], words, c["p_raw"], c["p_filtered"], strict=True)]
    if args.json:
        print_json({"ids": ids, "tokens": token_texts(loaded.tokenizer, ids), "candidates": rows})
    else:
        print_table(["token", "id", "p_raw", "p_filtered"], [[repr(r["token"]), r["id"], r["p_raw"], r["p_filtered"]]
                                                              for r in rows])
    return 0


def run_sample(args) -> int:
    """Print the continuation and each new token with the probability it was drawn with."""
    from lab import sampling

    if args.max_new_tokens < 1:
        raise CliError(f"--max-new-tokens must be at least 1, not {args.max_new_tokens}")
    loaded = _load_decoder(args)
    try:
        out = sampling.sample(loaded.model, loaded.tokenizer, args.prompt, args.max_new_tokens,
                              args.temperature, args.top_k, args.top_p, args.seed)
    except sampling.SamplingError as e:
        raise CliError(str(e)) from None
    if args.json:
        runs = readable(loaded.tokenizer, [t["id"] for t in out["tokens"]])
        print_json({"text": out["text"], "tokens": out["tokens"], "runs": runs})
    else:
        print(out["text"])
        print_table(["token", "id", "p"], [[repr(t["token"]), t["id"], t["p"]] for t in out["tokens"]])
    return 0

