"""`python -m lab lens`: the logit lens of one text (logit-lens page, chapter 05).

    python -m lab lens --json --model M --text T [--top K] [--position P] [--target WORD]   (or --file FILE)

Floor 0 is the embeddings (named so in the table; JSON lists count it as index 0), layer L the model's
own output. `--position` defaults to the last token
(negative counts from the end); `--target` is tokenized exactly as typed and must be one token
(GPT-2 writes a word after a space with the space: --target " big"); without it the target is the
model's final prediction at that position.
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, text_arg
from lab.cli.args import add_model_argument, add_text_arguments, fits, load_model_arg, the_text


def register(sub) -> None:
    """Add the `lens` command."""
    p = sub.add_parser("lens", help="the logit lens: what every layer would predict next")
    add_model_argument(p)
    add_text_arguments(p)
    p.add_argument("--top", type=int, default=5, metavar="K", help="top tokens kept per layer and position (default 5)")
    p.add_argument("--position", type=int, default=-1, metavar="P",
                   help="the position whose target is followed up the layers (default -1, the last token)")
    p.add_argument("--target", type=text_arg, metavar="WORD",
                   help="follow this token (exactly as typed, one token) instead of the model's final prediction")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_lens)


def run_lens(args) -> int:
    """Print the lens as JSON, or a per-layer table at the position without --json."""
    from lab import lens
    from lab.text import encode

    text = the_text(args)
    loaded = load_model_arg(args.model)
    try:
        lens.check_model(loaded.model)
        ids = encode(loaded.tokenizer, text)
        fits(len(ids), loaded)
        position = lens.check_position(args.position, len(ids))
        target = None if args.target is None else lens.target_id(loaded.tokenizer, args.target)
        result = lens.lens(loaded.model, ids, top=args.top, target=target)
    except lens.LensError as e:
        raise CliError(str(e)) from None
    doc = lens.to_json(result, loaded.tokenizer, ids, position)
    if args.json:
        print_json(doc)
        return 0
    tg = doc["target"]
    print(f"position {position} ({doc['readable'][position]!r}); target {tg['token']!r} (id {tg['id']})")
    first, settled = lens.first_and_settled(tg["rank"])
    print(f"rank 1 first at layer: {_floor(first)}; settled from layer: {_floor(settled)}")
    print_table(["layer", "top token", "p", "target rank", "target p"],
                [[lens.floor_name(i), repr(doc["top"][i][position][0]["token"]), doc["top"][i][position][0]["p"],
                  tg["rank"][i], tg["p"][i]] for i in range(doc["n_layer"] + 1)])
    return 0


def _floor(layer: int | None) -> str:
    """A floor as the table's rows name it ("embeddings", "3"), or "none"."""
    from lab.lens import floor_name

    return "none" if layer is None else floor_name(layer)
