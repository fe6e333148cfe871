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
import re
import sys
import unicodedata
import warnings

from lab import pages as manifest
from lab.errors import LabError


def __getattr__(name: str):
    """MODULES: the command modules, in the order `--help` lists them, read from the page manifest (lab/pages.py:
    each page's, in the navigation's order, then the commands of no one page)."""
    if name == "MODULES":
        return manifest.cli_modules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class CliError(Exception):
    """A problem with the command line itself (an option, a file): one line, exit status 2. Not a ValueError,
    so an argparse type function can raise it with its own words (argparse rewords ValueErrors)."""


MESSAGE_CHARS = 400  # an error line longer than this keeps its start and end, the middle left out
_ESCAPED = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # control, format (bidi overrides), lone surrogates, line breaks
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default prints usage too; keep it to one line
        raise CliError(message)


def text_arg(value: str) -> str:
    """An argparse type for text typed on the command line: refused when it holds a lone surrogate (bytes that
    were not UTF-8, which Python keeps as U+DC80..U+DCFF), as read_text refuses such a file."""
    bad = _SURROGATE.search(value)
    if bad:
        raise argparse.ArgumentTypeError(
            f"not valid UTF-8 text (a lone surrogate U+{ord(bad.group()):04X} at character {bad.start()}); "
            "give the text in UTF-8")
    return value


def one_line(message: str) -> str:
    """`message` as one readable terminal line: line breaks, control and bidi characters escaped, and a very
    long message cut in the middle (a 200,000-character name or file name stays readable)."""
    message = "".join(c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) in _ESCAPED else c
                      for c in message)
    if len(message) > MESSAGE_CHARS:
        head, tail = MESSAGE_CHARS * 2 // 3, MESSAGE_CHARS // 3
        message = f"{message[:head]} [... {len(message) - head - tail:,} characters ...] {message[-tail:]}"
    return message


def read_text(path: str) -> str:
    """The UTF-8 text of a file, or stdin for '-' (a leading BOM dropped); CliError with a clear line otherwise."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8-sig")
        with open(path, "rb") as f:
            return f.read().decode("utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise CliError(f"is a directory, not a text file: {path}") from None
    except PermissionError:
        raise CliError(f"cannot read (permission denied): {path}") from None
    except UnicodeDecodeError as e:
        raise CliError(f"not UTF-8 text: {path} (byte {e.start})") from None
    except ValueError:  # a NUL in the name, or a name the file system's encoding cannot write
        raise CliError(f"not a usable file name: {path!r}") from None
    except OSError as e:  # name too long, symlink loop, I/O error...: the system's words, one line
        raise CliError(f"cannot read {path}: {e.strerror or e}") from None


def print_json(obj) -> None:
    """Write one JSON document to stdout (UTF-8, not ASCII-escaped), or ASCII-escaped when stdout cannot
    carry it: a lone surrogate (a file name that is not UTF-8) is then written as its \\uXXXX escape."""
    text, encoding = json.dumps(obj, ensure_ascii=False), getattr(sys.stdout, "encoding", None) or "utf-8"
    if _SURROGATE.search(text) or encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
        try:
            text.encode(encoding)
        except (UnicodeEncodeError, LookupError):
            text = json.dumps(obj)
    sys.stdout.write(text + "\n")


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
    for name in manifest.cli_modules():
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
    """Parse, run, and turn a CliError or any lab error (lab.errors.LabError) into one line on stderr with
    exit status 2."""
    quiet_libraries()
    if hasattr(sys.stdout, "reconfigure"):  # a table showing a non-UTF-8 file name prints it escaped, no traceback
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        args = build_parser().parse_args(argv)
        return int(args.run(args) or 0)
    except (CliError, LabError) as e:
        print(f"lab: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `python -m lab ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
