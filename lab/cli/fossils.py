"""`python -m lab fossils`: the models the course dissects, side by side, from their configurations (chapter 00).

    python -m lab fossils --json [--model NAME_OR_DIR ...] [--tokens T]

prints {"fossils": [row, ...], "gpt2_paper_gap": [...], "fitting_vocabularies": [lo, hi]}: each row has the
shape (layers, heads, width, ff, context, positions, vocabulary, tied, layer_norm, position_scheme,
tokenizer, kind), "params" {embeddings, attention, mlp, norms, head, total}, "flops_per_token" {attended,
weights, attention, total}, "weights_bytes" {fp32, fp16, int8}, "kv_cache" (null for an encoder), the facts
beside them (date, data, data_bytes, tokens_seen, paper_params, each with its source) and "changed" (what
differs from the row above). No model is loaded and nothing is downloaded. See lab/fossils.py.
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, text_arg


def register(sub) -> None:
    """Add the `fossils` command."""
    p = sub.add_parser("fossils", help="the course's models side by side from their configurations: parameters "
                                       "split, FLOPs per token, memory, key-value cache, data, year (chapter 00)")
    p.add_argument("--model", action="append", type=text_arg, metavar="NAME_OR_DIR",
                   help="a fossil (openai-gpt, gpt2, ..., course-gpt2) or a local Hugging Face folder; repeat "
                        "for several (default: all, in lineage order)")
    p.add_argument("--tokens", type=int, metavar="T", help="keys attended for the FLOPs (default: the full context)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_fossils)


def run_fossils(args) -> int:
    """Print the table, or its JSON."""
    from lab.fossils import FossilError, report

    try:
        r = report(args.model, args.tokens)
    except FossilError as e:
        raise CliError(str(e)) from None
    if args.json:
        print_json(r)
        return 0
    print_table(["model", "date", "layers", "heads", "width", "context", "vocab", "params", "GFLOPs/token",
                 "KV fp16/token"],
                [[f["name"], f["date"] or "-", f["layers"], f["heads"], f["width"], f["context"], f["vocabulary"],
                  f"{f['params']['total']:,}", f"{f['flops_per_token']['total'] / 1e9:.3f}",
                  f"{f['kv_cache']['fp16_per_token']:,} B" if f["kv_cache"] else "-"] for f in r["fossils"]])
    print()
    for g in r["gpt2_paper_gap"]:
        print(f"{g['name']}: released {g['released']:,}, paper {g['paper']:,}; with GPT-1's 40,478-token vocabulary "
              f"{g['tries']['gpt1_vocabulary']['count']:,}")
    return 0
