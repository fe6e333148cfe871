"""`python -m lab trace`: GPT-2's forward pass written out in lab/gpt2.py, recorded step by step (chapter 13).

    python -m lab trace --json --model M --text T [--layer L --head H]

prints {"tokens": [str], "steps": [{"name", "shape"}], "attention": [[x]] (layer L, head H, after the
softmax), "top": [{"id", "token", "logit"}] (last position, top 5), "max_abs_diff"}: max_abs_diff is the
largest |difference| between lab.gpt2's logits and transformers' on that text. `--kv N` adds "kv_cache":
N greedy tokens decoded with and without the key-value cache, each step timed both ways. See lab/trace.py.
"""

from __future__ import annotations

import json

from lab.cli import CliError, print_json, print_table
from lab.cli.args import add_model_argument, add_text_arguments, load_model_arg, the_text


def register(sub) -> None:
    """Add the `trace` command."""
    p = sub.add_parser("trace", help="GPT-2's code (lab/gpt2.py) run on a text, step by step, against transformers")
    add_model_argument(p)
    add_text_arguments(p)
    p.add_argument("--layer", type=int, default=0, metavar="L", help="the layer whose steps are kept (default 0)")
    p.add_argument("--head", type=int, default=0, metavar="H", help="the head shown (default 0)")
    p.add_argument("--kv", type=int, default=0, metavar="N",
                   help="also decode N greedy tokens with and without the key-value cache, timing each step")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_trace)


def run_trace(args) -> int:
    """Trace one text and print the steps, the top tokens and the parity figure."""
    from lab.trace import TraceError, kv_steps, token_ids, trace

    text = the_text(args)
    if not 0 <= args.kv <= 256:
        raise CliError(f"--kv must be from 0 to 256, not {args.kv}")
    loaded = load_model_arg(args.model)
    try:
        r = trace(loaded, text, args.layer, args.head)
        if args.kv:
            r["kv_cache"] = kv_steps(loaded, token_ids(loaded, text), args.kv)
    except TraceError as e:
        raise CliError(f"{loaded.name}: {e}") from None
    if args.json:
        print_json(r)
        return 0
    print(f"{loaded.name}: {len(r['tokens'])} tokens; largest |logit difference| against transformers: "
          f"{r['max_abs_diff']:.2e}")
    print_table(["step", "shape"], [[s["name"], " x ".join(map(str, s["shape"]))] for s in r["steps"]])
    print_table(["id", "token", "logit"],
                [[x["id"], json.dumps(x["token"], ensure_ascii=False), x["logit"]] for x in r["top"]])
    if args.kv:
        print_table(["step", "tokens", "cache", "ms with cache", "ms without", "max |diff|"],
                    [[s["step"], s["tokens"], " x ".join(map(str, s["cache"])), 1000 * s["with_cache"],
                      1000 * s["without_cache"], f"{s['max_abs_diff']:.1e}"] for s in r["kv_cache"]])
    return 0
