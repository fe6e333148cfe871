"""The lab-guide page (chapter 15): it lists every sub-command the CLI's parser has, each under its chapter,
with its usage as argparse writes it, in English and Portuguese."""

from __future__ import annotations

import argparse

import pytest

from lab.cli import build_parser
from tests.pages import open_page
from ui.chapters import COMMANDS, TITLES


def parser_commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def test_every_command_has_a_chapter_and_every_page_named_exists():
    assert set(parser_commands()) == set(COMMANDS)
    assert all(page is None or page in TITLES for _, page in COMMANDS.values())


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_page_lists_every_sub_command_with_its_usage(fresh_caches, lang):
    at = open_page("app_pages/lab_guide.py", timeout=60, lang=lang)
    codes = [c.value for c in at.code]
    names = parser_commands()
    assert len(codes) == len(names)
    for name, code in zip(names, sorted(codes, key=lambda c: names.index(c.split()[3])), strict=True):
        assert code.startswith(f"python -m lab {name} ") or code == f"python -m lab {name} [-h]", code
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(codes) == {" ".join(p.format_usage().split())[len("usage: "):] for p in sub.choices.values()}
    headers = [h.value for h in at.subheader]
    assert (("Chapter 00" if lang == "en" else "Capítulo 00") in headers)
