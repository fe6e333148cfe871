"""A page is its own files plus one entry of the page manifest, lab/pages.py (issue 51).

A throwaway page, registered by one manifest entry and nothing else, with its own script, command module and bench
module written to a temporary folder, is found in the navigation app.py builds, the course map and the lab guide,
the lessons' schema, the bad-input matrix, the CLI, the benchmarks and the class bench. The shipped manifest is
sound (each page's script, views, commands and benches exist), and README's "How to add a page" is followed.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields, replace
from pathlib import Path

import pytest

from lab import lessons
from lab import pages as manifest
from tests.pages import APP, open_page

ROOT = Path(APP).parent

PAGE = '''
import streamlit as st

from ui import presentation, widgets
from ui.i18n import t
from ui.streamlit_internals import run_context

st.title(t("Throwaway", "Descartável"))
with presentation.view("main"):
    widgets.Slider("tw_n", t("How many", "Quantos"), 1, 5, 2).draw()
# the navigation as this run has it: (url path, title, icon) of every page, in order
st.session_state["tw_nav"] = [(i.get("url_pathname"), i.get("page_name"), i.get("icon"))
                              for i in run_context().pages_manager.get_pages().values()]
'''
CLI = '''
from lab.cli import print_json


def register(sub):
    p = sub.add_parser("throwaway", help="the throwaway page's numbers")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args):
    print_json({"answer": 42})
    return 0
'''
BENCH = '''
from lab.benchmarks import entry


def benchmarks():
    return [entry("throwaway: nothing vs nothing", 1.0, 1.0, 2.0)]
'''
INPUTS = {"tw_n": {"kind": "integer", "lo": 1, "hi": 5, "default": "2"}, "tw_text": {"kind": "text", "max": 2000}}


@pytest.fixture
def throwaway(tmp_path, monkeypatch) -> manifest.Page:
    """The throwaway page's own files (its script, lab.cli and lab.benchmarks modules, in tmp_path) and its one
    manifest entry, after the ceiling; its inputs as scripts/lesson_headless.py would write them."""
    (tmp_path / "throwaway.py").write_text(PAGE, encoding="utf-8")
    (tmp_path / "throwaway_cli.py").write_text(CLI, encoding="utf-8")
    (tmp_path / "throwaway_bench.py").write_text(BENCH, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = manifest.Page("throwaway", ("A throwaway page", "Uma página descartável"), "science", ("07", "16"),
                          ("throwaway",), ("throwaway_cli",), ("throwaway_bench",), True, ("main", "other"),
                          file=str(tmp_path / "throwaway.py"))
    monkeypatch.setattr(manifest, "PAGES", manifest.PAGES + (entry,))
    catalogue = lessons.catalogue() | {"throwaway": INPUTS}
    monkeypatch.setattr(lessons, "catalogue", lambda: catalogue)
    return entry


def test_the_shipped_manifest_is_sound():
    assert manifest.problems() == []
    for page in manifest.PAGES:
        source = (ROOT / page.script).read_text(encoding="utf-8")
        for view in page.views:  # each view a lesson step can name is drawn by the page
            assert f'presentation.view("{view}")' in source, (page.slug, view)
        for module in page.cli + page.bench:
            assert (ROOT / (module.replace(".", "/") + ".py")).is_file(), (page.slug, module)
    assert set(lessons.catalogue()) == set(manifest.slugs())  # the lessons' inputs are current for every page
    assert manifest.slugs()[0] == "home" and manifest.by_slug("home").default


def test_the_manifest_refuses_what_would_break_a_page():
    pages = manifest.PAGES
    assert manifest.problems(pages + (replace(pages[3], title=("x", "y")),)) == ["the slug 'tokens' is named twice",
                                                                                 "the command 'premium' is named twice",
                                                                                 "the command 'tokens' is named twice"]
    bad = replace(pages[3], slug="tokens2", commands=(), chapters=("17",), views=("a", "a"), file="app_pages/tokens.py")
    assert manifest.problems(pages + (bad,)) == [
        "tokens2: chapter '17' is not a chapter of the course", "tokens2: the view 'a' is named twice",
        "tokens2: its script app_pages/tokens.py is not named tokens2.py (the url path is the file's)"]
    assert manifest.problems(pages[1:]) == ["exactly one page must be the default page"]


def test_a_throwaway_page_is_in_the_navigation_after_the_ceiling(throwaway):
    at = open_page(throwaway.script, timeout=60, lang="pt")
    assert at.title[0].value == "Descartável"  # its own script ran: st.navigation has it
    nav = at.session_state["tw_nav"]
    assert [url for url, _, _ in nav] == [("" if p.default else p.slug) for p in manifest.PAGES]
    assert nav[-2][1] == "O teto" and nav[-1] == ("throwaway", "Uma página descartável", ":material/science:")
    assert at.query_params["view"] == "throwaway"  # its input reached the link under its name


def test_a_throwaway_page_is_on_the_course_map_and_in_the_lab_guide(throwaway):
    from ui.chapters import CHAPTERS, COMMANDS, TITLES

    assert TITLES[throwaway.script] == ("A throwaway page", "Uma página descartável")
    by_number = {c[0]: c[3] for c in CHAPTERS}
    assert by_number["07"] == ("app_pages/sampling.py", throwaway.script)
    assert by_number["16"] == ("app_pages/ceiling.py", throwaway.script)
    assert COMMANDS["throwaway"] == ("07, 16", throwaway.script)
    home = open_page(timeout=60)
    labels = [link.proto.label for link in home.get("page_link")]
    assert labels.count("and also → A throwaway page") == 2  # under chapters 07 and 16
    guide = open_page("app_pages/lab_guide.py", timeout=60)
    assert "python -m lab throwaway [-h] [--json]" in [c.value for c in guide.code]
    assert "Reproduces → A throwaway page" in [link.proto.label for link in guide.get("page_link")]


def test_a_throwaway_page_is_in_the_lesson_schema(throwaway):
    step = {"page": "throwaway", "inputs": {"tw_n": 4, "tw_text": "olá"}, "note": {"en": "a", "pt": "b"},
            "view": "other"}
    lesson = lessons.parse({"title": {"en": "T", "pt": "T"}, "steps": [step, step | {"view": None}]}, "t")
    assert [s.shows for s in lesson.steps] == ["other", "main"]
    assert lessons.link_params(lesson.steps[0]) == {"tw_n": "4", "tw_text": "olá"}
    assert "throwaway" in lessons.PAGES and lessons.VIEWS["throwaway"] == ("main", "other")
    with pytest.raises(lessons.LessonError, match="'masking' is not a view of the page throwaway"):
        lessons.parse({"title": {"en": "T", "pt": "T"}, "steps": [step | {"view": "masking"}]}, "t")


def test_without_its_entry_the_throwaway_page_is_nowhere(throwaway, monkeypatch):
    monkeypatch.setattr(manifest, "PAGES", manifest.PAGES[:-1])  # the entry is what names it, nothing else
    step = {"page": "throwaway", "inputs": {}, "note": {"en": "a", "pt": "b"}}
    with pytest.raises(lessons.LessonError, match="'throwaway' is not a page"):
        lessons.parse({"title": {"en": "T", "pt": "T"}, "steps": [step]}, "t")
    from lab.benchmarks import class_readers
    from tests.bad_inputs import matrix
    from ui.chapters import CHAPTERS

    assert "throwaway" not in matrix() and "throwaway" not in class_readers.PAGES
    assert all(throwaway.script not in c[3] for c in CHAPTERS)


def test_a_throwaway_page_is_in_the_bad_input_matrix_and_the_class_bench(throwaway, monkeypatch):
    from lab.benchmarks import class_readers
    from tests.bad_inputs import matrix

    assert matrix()["throwaway"] == {"path": throwaway.script, "texts": ["tw_text"], "links": ["tw_n"], "reveal": {}}
    assert class_readers.PAGES[-2:] == ("ceiling", "throwaway")
    plans = []

    class Done:
        returncode, stderr, stdout = 0, "", "{}"

    def run(argv, **kw):
        plans.append(json.loads(argv[-1]))
        return Done()

    monkeypatch.setattr(class_readers.subprocess, "run", run)
    monkeypatch.delenv("LAB_CLASS_PAGES", raising=False)
    monkeypatch.setenv("LAB_CLASS_SIZES", "1")
    class_readers.benchmarks()
    assert plans[0]["pages"][0] == "home" and plans[0]["pages"][-1] == "throwaway"


def test_a_throwaway_page_has_its_command_and_its_bench(throwaway, capsys):
    from lab import benchmarks, cli

    assert "throwaway_cli" in cli.MODULES and "throwaway_bench" in benchmarks.MODULES
    assert cli.main(["throwaway", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"answer": 42}
    assert cli.main(["bench", "--only", "throwaway_bench", "--json"]) == 0
    assert [b["name"] for b in json.loads(capsys.readouterr().out)["benchmarks"]] == ["throwaway: nothing vs nothing"]


def recipe() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("### How to add a page\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def test_the_readmes_recipe_is_its_own_files_and_one_manifest_entry():
    text = recipe()
    assert "**one manifest entry** in `lab/pages.py`" in text
    # every file it names exists for the page it says to copy (the sampling page: X = sampling)
    named = set(re.findall(r"`((?:app_pages|lab|ui|viz|tests|docs|scripts)/[\w/.]+)`", text))
    for path in named:
        real = path.replace("X", "sampling")
        if real.startswith("ui/runs") or "lesson_inputs" in real:
            continue  # optional (a page with a progress bar), and the generated file (checked below)
        assert (ROOT / real).exists(), path
    assert {"lab/X.py", "lab/cli/X.py", "viz/X.py", "ui/cached/X.py", "ui/draw/X.py", "app_pages/X.py",
            "tests/test_X.py", "tests/test_X_page.py", "tests/test_browser_X.py", "lab/benchmarks/X.py",
            "docs/X.md", "lab/pages.py"} <= named
    # the entry it shows is a real one: its fields are the manifest's, in order
    shown = re.search(r"`(Page\(.+?\))`", text, re.S).group(1)
    keywords = re.findall(r"(\w+)=", shown)
    names = [f.name for f in fields(manifest.Page)]
    assert keywords == [n for n in names if n in keywords] and set(keywords) <= set(names)
    assert ".venv/bin/python scripts/lesson_headless.py inputs" in text
    assert (ROOT / "scripts/lesson_headless.py").is_file()
    # and nothing else to edit: no page list of another file is named
    for stale in ("app.py`'s", "st.Page` in `app.py`", "TITLES", "CHAPTERS", "MODULES", "lab.lessons.PAGES",
                  "lab.lessons.VIEWS", "its rows in `tests/bad_inputs.py`"):
        assert stale not in text, stale
    for module in ("ui/navigation.py", "ui/chapters.py", "tests/test_page_manifest.py"):
        assert f"`{module}`" in text and (ROOT / module).is_file(), module


def test_every_list_of_pages_is_the_manifests():
    from lab import benchmarks, cli
    from lab.benchmarks import class_readers
    from tests.bad_inputs import matrix
    from tests.pages import page_paths
    from ui.chapters import CHAPTERS, COMMANDS, TITLES

    slugs = manifest.slugs()
    assert lessons.PAGES == slugs and list(lessons.VIEWS) == list(slugs)
    assert list(TITLES) == [p.script for p in manifest.PAGES]
    assert page_paths() == [""] + list(slugs[1:])
    assert set(matrix()) == {p for p in slugs if p not in ("lab_guide",)}  # every page with an input
    assert {c for c in COMMANDS if COMMANDS[c][1]} == {c for p in manifest.PAGES for c in p.commands}
    assert {p for c in CHAPTERS for p in c[3]} == {p.script for p in manifest.PAGES if p.chapters}
    assert set(cli.MODULES) >= {m for p in manifest.PAGES for m in p.cli}
    assert set(benchmarks.MODULES) >= {m for p in manifest.PAGES for m in p.bench}
    assert class_readers.PAGES == tuple(p.slug for p in manifest.PAGES if p.class_bench)


# The test modules' page lists, each the matrix tests/pages.py makes from the manifest (module, its list's name).
MODULES = {"translations": ("tests.test_translations", "PAGES"),
           "language_switch": ("tests.test_language_switch", "PAGES"),
           "portuguese_bytes": ("tests.test_portuguese_bytes", "PAGES"),
           "shared_links": ("tests.test_shared_links", "PAGES"),
           "presentation": ("tests.test_browser_presentation", "PAGES"),
           "classroom": ("tests.test_browser_classroom", "PAGES"),
           "bad_inputs": ("tests.test_reliability_inputs_pages", "MATRIX"),
           "reproduce": ("tests.test_reproduce", "PAGES")}


def test_every_per_page_matrix_is_the_manifests_and_leaves_out_no_page_unsaid():
    """Each test module's page list is its matrix; a matrix holds every page its rule admits (every page; every
    page with an input for the bad inputs; every page with a command for reproduce), but those LEFT_OUT names
    with a reason; no module keeps a list of its own."""
    import importlib

    from tests.bad_inputs import matrix as inputs
    from tests.pages import LEFT_OUT, MATRICES, matrix

    assert set(MODULES) == set(MATRICES) == set(LEFT_OUT)
    for name, (module, attr) in MODULES.items():
        assert list(getattr(importlib.import_module(module), attr)) == matrix(name), name
        for slug, why in LEFT_OUT[name].items():
            assert slug in manifest.slugs() and why.strip(), (name, slug)
    slugs = manifest.slugs()
    admitted = {"bad_inputs": [p.slug for p in manifest.PAGES if lessons.catalogue()[p.slug] or p.default],
                "reproduce": [p.slug for p in manifest.PAGES if p.commands]}
    for name in MATRICES:
        assert matrix(name) == [s for s in admitted.get(name, slugs) if s not in LEFT_OUT[name]], name
    assert list(inputs()) == admitted["bad_inputs"]


def test_the_own_text_choices_are_inputs_of_their_pages():
    """The manifest's own_text (the choice that reveals a page's text box) names an input of the page and one of
    its options, and the page has a text box; scripts/lesson_headless.py and the bad-input matrix read it."""
    import scripts.lesson_headless as headless
    from tests.bad_inputs import matrix

    for page in manifest.PAGES:
        specs = lessons.catalogue()[page.slug]
        for key, value in page.own_text:
            assert value in specs[key]["options"], (page.slug, key)
            assert any(s["kind"] == "text" for s in specs.values()), page.slug
    assert headless.extra() == [(p.slug, dict(p.own_text)) for p in manifest.PAGES if p.own_text] + headless.OPENED
    revealed = {p: m["reveal"] for p, m in matrix().items() if m["reveal"]}
    assert revealed == {p.slug: dict(p.own_text) for p in manifest.PAGES if p.own_text}
    assert revealed.items() >= {"perplexity": {"ppl_source": "own"}, "detector": {"det_source": "own"},  # hidden boxes
                                "ceiling": {"ceil_source": "own"}, "serving": {"serve_source": "url"}}.items()


def test_a_throwaway_page_is_in_every_test_matrix(throwaway, course_standins):
    """README's recipe, end to end: its files and its one entry put the throwaway page in every per-page matrix,
    and the language switch's, the translations' and the fuzzed links' checks pass on it."""
    from tests import test_language_switch, test_shared_links, test_translations
    from tests.pages import MATRICES, matrix

    for name in MATRICES:
        assert matrix(name)[-1] == "throwaway", name
    test_language_switch.test_switching_to_portuguese_gives_the_portuguese_page(course_standins, "throwaway")
    test_translations.test_every_page_in_both_languages(course_standins, "throwaway")
    assert test_shared_links.link_keys("throwaway") == ["tw_n", "tw_text"]
    test_shared_links.test_fuzzed_links_never_raise(course_standins, "throwaway")
