"""Chapter 15 on every page: "reproduce this view", the exact `python -m lab ...` command that prints what the
reader is looking at, for the page's current inputs, in a code block with a copy button.

A page calls `reproduce.command(["lens", "--json", "--model", name, "--text", text, ...])` once, near its end
(several argv lists: one line each);
a text the command reads from a file is passed as `stdin=` and piped in with `printf '%s'` (the argv then says
`--file -`). Every argument is quoted for a POSIX shell (shlex: single quotes, a quote inside written as
'"'"'), so quotes, `$`, backticks, backslashes and line breaks reach the command exactly as typed.
"""

from __future__ import annotations

import shlex

import streamlit as st

from ui.i18n import t

PROGRAM = ["python", "-m", "lab"]


def shell_line(argv: list[str], stdin: str | None = None) -> str:
    """The shell command line: `python -m lab ARGV...`, with `printf '%s' TEXT |` in front when `stdin` is given.
    A NUL cannot travel in a shell argument: it is written as the escape \\0000 through printf's %b instead."""
    line = shlex.join([*PROGRAM, *argv])
    if stdin is None:
        return line
    if "\x00" in stdin:
        escaped = stdin.replace("\\", "\\\\").replace("\x00", "\\0000")
        return f"printf '%b' {shlex.quote(escaped)} | {line}"
    return f"printf '%s' {shlex.quote(stdin)} | {line}"


def command(*argvs: list[str], stdin: str | None = None, where=None) -> str:
    """Draw "Reproduce this view" with the command line (one line per argv: a page that measures several
    models gives one command each, the same `stdin` piped into each; an (argv, stdin) pair pipes its own, None
    none) in a code block, which has a copy button; returns the lines."""
    lines = "\n".join(shell_line(*argv) if isinstance(argv, tuple) else shell_line(argv, stdin) for argv in argvs)
    box = (where or st).expander(t("Reproduce this view from the shell (chapter 15)",
                                   "Reproduza esta vista no terminal (capítulo 15)"), icon=":material/terminal:")
    box.caption(t("Run it in the project's folder (with its virtual environment active): its JSON carries the numbers "
                  "shown here.", "Rode na pasta do projeto (com o ambiente virtual ativo): o JSON que ele imprime traz "
                  "os números mostrados aqui."))
    box.code(lines, language="bash", wrap_lines=True)
    return lines
