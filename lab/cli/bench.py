"""`python -m lab bench [--json] [--only SUBSTRING]`: every benchmark, as ratios to a reference."""

from __future__ import annotations

import importlib

from lab.cli import CliError, print_json, print_table


def register(sub) -> None:
    p = sub.add_parser("bench", help="benchmarks: project time / reference time, side by side")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--only", metavar="TEXT", help="run only benchmark modules whose name contains TEXT")
    p.set_defaults(run=run)


def run(args) -> int:
    import os

    from lab.benchmarks import MODULES

    # No progress bars from saving and loading the benchmark models: stderr stays for real errors.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

    mods = [m for m in MODULES if not args.only or args.only in m.rsplit(".", 1)[-1]]
    if not mods:
        raise CliError(f"no benchmark module matches {args.only!r}")
    results = []
    for name in mods:
        results.extend(importlib.import_module(name).benchmarks())
    if args.json:
        print_json({"benchmarks": results})
    else:
        print_table(["benchmark", "project s", "reference s", "ratio", "target", "ok"],
                    [[b["name"], b["project_s"], b["reference_s"], b["ratio"], b["target"], b["ok"]]
                     for b in results])
    return 0
