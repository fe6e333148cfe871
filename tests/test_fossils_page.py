"""The fossils page (chapter 00) under AppTest, in English and Portuguese: its numbers are lab.fossils' own,
the command it shows for a non-default view prints them, and no string is left in the other language."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lab import fossils
from tests.pages import open_page

ROOT = Path(__file__).resolve().parents[1]
PAGE = "app_pages/fossils.py"


def run_shown(line: str) -> dict:
    """Run a command line exactly as a page shows it, in bash, with the project's python first on PATH."""
    env = {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    out = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def written(n: int, lang: str) -> str:
    return f"{n:,}".replace(",", ".") if lang == "pt" else f"{n:,}"


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_command_shown_prints_the_pages_numbers(fresh_caches, lang):
    at = open_page(PAGE, timeout=120, lang=lang, fos_models="gpt2-medium,openai-gpt,course-roberta")
    [line] = [c.value for c in at.code]
    assert line == "python -m lab fossils --json --model openai-gpt --model gpt2-medium --model course-roberta"
    printed = run_shown(line)
    rows = {r["name"]: r for r in printed["fossils"]}
    assert list(rows) == ["openai-gpt", "gpt2-medium", "course-roberta"]
    assert at.metric[0].value == written(rows["gpt2-medium"]["params"]["total"], lang) == \
        written(354_823_168, lang)
    cost = at.dataframe[1].value
    assert list(cost.iloc[:, 1]) == [written(rows[n]["params"]["total"], lang) for n in rows]
    assert list(cost.iloc[:, 0]) == list(rows)


def test_default_view_shows_every_fossil_and_the_paper_gap(fresh_caches):
    at = open_page(PAGE, timeout=120)
    assert [c.value for c in at.code] == ["python -m lab fossils --json"]
    assert list(at.dataframe[0].value.iloc[:, 0]) == list(fossils.BY_NAME)
    gap = at.dataframe[3].value
    assert list(gap.iloc[:, 1]) == ["124,439,808", "354,823,168", "774,030,080", "1,557,611,200"]
    assert list(gap.iloc[:, -1]) == ["116,929,536", "344,809,472", "761,512,960", "1,541,964,800"]
    assert any("40,468 to 40,812" in m.value for m in at.markdown)


def test_no_model_chosen_says_so(fresh_caches):
    at = open_page(PAGE, timeout=120, state={"fos_models": []})
    assert any("at least one" in i.value for i in at.info)


@pytest.mark.parametrize("page", ["fossils"])
def test_every_string_in_the_pages_language(course_standins, monkeypatch, page):
    """tests/test_translations.py's check on these pages. roberta-large is a model's name, as the registry's
    names are (which that check leaves out), but the app does not load it, so it is not in the registry."""
    from lab.models import registry
    from tests.test_translations import numbers_in, problems, report, visit

    monkeypatch.setitem(registry.REGISTRY, "roberta-large", registry.info("roberta-base"))

    english, portuguese = visit(page, "en"), visit(page, "pt")
    found = problems(english, "en", set()) + problems(portuguese, "pt", numbers_in(english))
    assert len(portuguese) > 5 and len(english) > 5
    assert not found, report(found)
