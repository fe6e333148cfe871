"""`python -m lab models [--json]` and `python -m lab prefetch NAME ...`: the course's models.

    python -m lab models --json        every registry model: size, kind, context, cached here?
    python -m lab prefetch gpt2 ...    download into the standard Hugging Face cache (before class)
"""

from __future__ import annotations

import sys

from lab.cli import CliError, one_line, print_json, print_table


def register(sub) -> None:
    """Add the `models` and `prefetch` commands."""
    p = sub.add_parser("models", help="the course's models: kind, size, context, cached here or not")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_models)

    p = sub.add_parser("prefetch", help="download models into the Hugging Face cache for offline use")
    p.add_argument("names", nargs="+", metavar="NAME", help="registry model name(s)")
    p.set_defaults(run=run_prefetch)


def model_rows() -> list[dict]:
    """One dict per registry model, as `models --json` prints it."""
    from lab.models.hub import is_available
    from lab.models.registry import REGISTRY

    return [{"name": m.name, "hub_id": m.hub_id, "kind": m.kind, "params": m.params,
             "download_bytes": m.download_bytes, "context": m.context, "cached": is_available(m.name)}
            for m in REGISTRY.values()]


def run_models(args) -> int:
    from lab.models.registry import REGISTRY, human_bytes

    rows = model_rows()
    if args.json:
        print_json(rows)
    else:
        print_table(["name", "hub id", "kind", "params", "download", "context", "chapter", "cached"],
                    [[r["name"], r["hub_id"] or "(in repo)", r["kind"], f"{r['params'] / 1e6:.1f}M",
                      human_bytes(r["download_bytes"]), r["context"], REGISTRY[r["name"]].chapter,
                      "yes" if r["cached"] else "no"] for r in rows])
    return 0


def run_prefetch(args) -> int:
    from lab.models.hub import ModelUnavailable, download
    from lab.models.registry import REGISTRY, human_bytes

    unknown = [n for n in args.names if n not in REGISTRY]
    if unknown:
        raise CliError(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    _quiet_hub_retries()
    failed = 0
    for name in dict.fromkeys(args.names):
        try:
            where = download(name)
        except ModelUnavailable as e:
            line = one_line(str(e))  # one line per model, naming it (an image's build prints it as its failure)
            named = f"{name} ({REGISTRY[name].hub_id}" in line
            print(f"lab: error: {line}" if named else f"lab: error: {name}: {line}", file=sys.stderr)
            failed += 1
            continue
        print(f"{name}: ready offline ({human_bytes(REGISTRY[name].download_bytes)}) in {where}")
    return 2 if failed else 0


def _quiet_hub_retries() -> None:
    """huggingface_hub logs each retry of a dropped download as warnings; the one line per model says it."""
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.set_verbosity_error()
