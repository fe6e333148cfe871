"""The lab guide (chapter 15) read from the CLI's own parser, so it cannot drift: every sub-command with its help
line and its usage. Used by the lab-guide page; `python -m lab --help` prints the same from argparse."""

from __future__ import annotations

import argparse


def commands() -> list[dict]:
    """[{"name", "help", "usage"}] for every sub-command of `python -m lab`, in the parser's order."""
    from lab.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help or "" for c in sub._choices_actions}
    return [{"name": name, "help": helps.get(name, ""), "usage": " ".join(p.format_usage().split())[len("usage: "):]}
            for name, p in sub.choices.items()]
