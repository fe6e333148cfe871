"""Command-line entry: one sub-command per module, errors as one readable line and exit 2.

Each command module defines `register(subparsers)` that adds its parser(s) with
`set_defaults(run=...)`; a run function returns the exit code. Modules import heavy libraries
(torch, transformers) inside their run functions, so `python -m lab tokens` never loads torch.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import warnings

# Command modules, in the order `--help` lists them.
MODULES = (
    "lab.cli.tokens",
    "lab.cli.bench",
    "lab.cli.models",
    "lab.cli.attention",
    "lab.cli.train",
    "lab.cli.perplexity",
    "lab.cli.lens",
    "lab.cli.embeddings",
    "lab.cli.sampling",
)


class LabError(Exception):
    """A problem with the user's input or environment: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default prints usage too; keep it to one line
        raise LabError(message)


def read_text(path: str) -> str:
    """The UTF-8 text of a file, or stdin for '-' (a leading BOM dropped); LabError with a clear line otherwise."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8-sig")
        with open(path, "rb") as f:
            return f.read().decode("utf-8-sig")
    except FileNotFoundError:
        raise LabError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise LabError(f"is a directory, not a text file: {path}") from None
    except PermissionError:
        raise LabError(f"cannot read (permission denied): {path}") from None
    except UnicodeDecodeError as e:
        raise LabError(f"not UTF-8 text: {path} (byte {e.start})") from None
    except OSError as e:  # name too long, symlink loop, I/O error...: the system's words, one line
        raise LabError(f"cannot read {path}: {e.strerror or e}") from None


def print_json(obj) -> None:
    """Write one JSON document to stdout (UTF-8, not ASCII-escaped)."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def print_table(header: list[str], rows: list[list]) -> None:
    """A plain aligned text table for the non-JSON output."""
    cells = [[str(c) for c in header]] + [[f"{c:.3f}" if isinstance(c, float) else str(c)
                                           for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def build_parser() -> argparse.ArgumentParser:
    """The full parser, every command module registered."""
    parser = _Parser(prog="python -m lab", description="The course lab, from the shell.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in MODULES:
        importlib.import_module(name).register(sub)
    return parser


def quiet_libraries() -> None:
    """Keep stderr for our own one-line messages: transformers' warnings (e.g. "Token indices sequence length
    is longer than...", printed before our error about the same thing) and Python warnings are not shown."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # read when transformers first loads
    if "transformers" in sys.modules:
        sys.modules["transformers"].logging.set_verbosity_error()
    warnings.filterwarnings("ignore")


def main(argv: list[str] | None = None) -> int:
    """Parse, run, and turn LabError into one line on stderr with exit status 2."""
    quiet_libraries()
    try:
        args = build_parser().parse_args(argv)
        return int(args.run(args) or 0)
    except LabError as e:
        print(f"lab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `python -m lab ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
