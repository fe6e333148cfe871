"""Lesson files (lab/lessons.py): the schema on good and bad files, the inputs catalogue kept current, and
`python -m lab lesson check` on every shipped lesson (docs/teaching.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab import lessons
from tests.bad_inputs import CASES

ROOT = Path(__file__).resolve().parents[1]
GOOD = """\
title: {en: "The mask", pt: "A máscara"}
model: course-gpt2
steps:
  - page: attention
    inputs: {attn_layer: 2, attn_head: 3, attn_metric: previous, attn_text: "O troféu"}
    note: {en: "Previous-token head.", pt: "Cabeça do token anterior."}
    question: {en: "Why?", pt: "Por quê?"}
  - page: sampling
    inputs: {samp_temperature: 0.7, samp_top_p: 0.9, samp_compare: seeds}
    note: {en: "Five seeds.", pt: "Cinco sementes."}
  - page: fossils
    inputs: {fos_models: [gpt2, course-gpt2]}
    note: {en: "Shelf.", pt: "Estante."}
"""


def lesson(text: str):
    return lessons.loads(text, "t", lessons.registry_models())


def test_a_good_file_loads_whole():
    got = lesson(GOOD)
    assert got.title == {"en": "The mask", "pt": "A máscara"} and got.model == "course-gpt2"
    assert [s.page for s in got.steps] == ["attention", "sampling", "fossils"]
    assert got.steps[0].question == {"en": "Why?", "pt": "Por quê?"} and got.steps[1].question is None
    assert lessons.link_params(got.steps[0]) == {"attn_layer": "2", "attn_head": "3", "attn_metric": "previous",
                                                 "attn_text": "O troféu"}
    assert lessons.link_params(got.steps[2]) == {"fos_models": "gpt2,course-gpt2"}


# (what is changed in GOOD, the start of the message: the step and the field it names)
BAD = [
    ("page: sampling", "page: nowhere", "step 2, page: 'nowhere' is not a page"),
    ("attn_layer: 2", "attn_layr: 2", "step 1, inputs.attn_layr: is not an input of the page attention"),
    ("attn_layer: 2", "attn_layer: 4", "step 1, inputs.attn_layer: 4 is outside 0..3"),
    ("attn_layer: 2", "attn_layer: 1.5", "step 1, inputs.attn_layer: must be a whole number"),
    ("attn_layer: 2", "attn_layer: true", "step 1, inputs.attn_layer: must be a whole number"),
    ("samp_temperature: 0.7", "samp_temperature: 9", "step 2, inputs.samp_temperature: 9 is outside 0.0..2.0"),
    ("samp_top_p: 0.9", "samp_top_p: .nan", "step 2, inputs.samp_top_p: nan is outside"),
    ("samp_compare: seeds", "samp_compare: trio",
     "step 2, inputs.samp_compare: 'trio' is not one of: none, pair, seeds"),
    ("[gpt2, course-gpt2]", "[gpt2, gpt5]", "step 3, inputs.fos_models: 'gpt5' is not one of"),
    ('attn_text: "O troféu"', "attn_text: 42", "step 1, inputs.attn_text: must be text"),
    ('attn_text: "O troféu"', f'attn_text: "{"x" * 2001}"', "step 1, inputs.attn_text: is 2001 characters"),
    ('pt: "Cinco sementes."', 'pt: ""', "step 2, note.pt: must be a non-empty text"),
    ('note: {en: "Shelf.", pt: "Estante."}', 'note: {en: "Shelf."}', "step 3, note: must have exactly two texts"),
    ('question: {en: "Why?", pt: "Por quê?"}', 'question: "Why?"', "step 1, question: must have exactly two"),
    ("    inputs: {fos_models", "    colour: red\n    inputs: {fos_models", "step 3, colour: is not a field"),
    ("model: course-gpt2", "model: gpt-5", "model: 'gpt-5' is not a model the app knows"),
    ('title: {en: "The mask", pt: "A máscara"}', 'title: "The mask"', "title: must have exactly two texts"),
    ("steps:", "stepz:", "stepz: is not a field of a lesson"),
    ("steps:\n", "steps: []\nold:\n", "old: is not a field"),
    ("    inputs: {fos_models: [gpt2, course-gpt2]}", "    inputs: [fos_models]", "step 3, inputs: must be a mapping"),
    ("steps:\n  - page: attention", "steps:\n  - page: attention\n   - oops", "line 5, column 4: not valid YAML"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD, ids=[m.split(":")[0] + "-" + m[-12:] for *_, m in BAD])
def test_a_bad_file_is_refused_naming_the_step_and_field(old, new, message):
    assert old in GOOD
    with pytest.raises(lessons.LessonError) as e:
        lesson(GOOD.replace(old, new, 1))
    assert str(e.value).startswith(message), str(e.value)
    details = e.value.details
    assert e.value.reason == "bad_lesson" and str(e.value) == f"{details['where']}: {details['problem']}"


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just words", "title: [\n", "\x00", "steps: 7\n"])
def test_garbage_is_one_lesson_error(text):
    with pytest.raises(lessons.LessonError):
        lesson(text)


def test_a_huge_file_is_refused_before_parsing():
    with pytest.raises(lessons.LessonError, match="larger than"):
        lesson("# " + "x" * lessons.MAX_FILE_BYTES)


@pytest.mark.parametrize("name", ["", "../etc/passwd", "nope", "03-attention-trophy.yaml", "A" * 300, "x\x00"])
def test_a_name_that_is_not_a_shipped_lesson(name):
    with pytest.raises(lessons.LessonError, match="not a shipped lesson"):
        lessons.named(name)


# The pages no shipped lesson has to visit, each with its reason. Every other page of the manifest (lab/pages.py)
# is a page a class is shown, so a page added there without a lesson step fails the test below.
NOT_IN_A_LESSON = {
    "home": "the course map: a lesson is opened from it, and the lesson bar sits above every page already",
    "glossary": "a reference a reader looks words up in; each term links the view a step would show",
}


def test_every_shipped_lesson_loads_and_covers_the_chapters():
    """Every page of the manifest with views is visited by some shipped lesson, except NOT_IN_A_LESSON's."""
    from lab import pages as manifest

    names = lessons.shipped()
    assert len(names) >= 6
    loaded = [lessons.named(n) for n in names]
    assert all(3 <= len(x.steps) <= 8 for x in loaded), [(x.name, len(x.steps)) for x in loaded]
    pages = {s.page for x in loaded for s in x.steps}
    assert set(NOT_IN_A_LESSON) <= set(manifest.slugs()), "a left-out page the manifest does not have"
    wanted = {p.slug for p in manifest.PAGES if p.views} - set(NOT_IN_A_LESSON)
    assert len(wanted) >= 15 and "heads" in wanted
    assert not wanted - pages, f"pages no shipped lesson visits: {sorted(wanted - pages)} (add a step to a lesson, " \
                               "or the page to NOT_IN_A_LESSON with its reason)"


def test_the_catalogue_names_every_page():
    assert set(lessons.catalogue()) == set(lessons.PAGES)
    assert lessons.catalogue()["attention"]["attn_layer"] == {"kind": "integer", "lo": 0, "hi": 3, "default": "0"}


@pytest.mark.slow
def test_the_inputs_catalogue_is_what_the_pages_bind(tmp_path):
    """lab/data/lesson_inputs.json is current: running every page headless again writes the same file."""
    out = tmp_path / "inputs.json"
    done = subprocess.run([sys.executable, "scripts/lesson_headless.py", "inputs", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(out.read_text()) == lessons.catalogue(), "run: python scripts/lesson_headless.py inputs"


def check(*files) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab", "lesson", "check", *map(str, files)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)


def test_check_refuses_a_bad_file_in_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace("attn_layer: 2", "attn_layer: 40"), encoding="utf-8")
    done = check(bad, tmp_path / "missing.yaml")
    assert done.returncode == 2 and done.stderr == ""
    assert done.stdout.splitlines() == [f"{bad}: step 1, inputs.attn_layer: 40 is outside 0..3",
                                        f"{tmp_path / 'missing.yaml'}: file: no such file"]


@pytest.mark.slow
def test_check_opens_each_step_and_refuses_what_the_page_ignores(tmp_path):
    """A value inside the catalogue's range (the default model's) but outside this lesson's model's: the schema
    passes it, the headless run sees the page ignore it."""
    small = tmp_path / "small.yaml"
    small.write_text(GOOD.replace("model: course-gpt2", "model: course-gpt2-1x64"), encoding="utf-8")
    done = check(small)
    lines = done.stdout.splitlines()
    assert done.returncode == 2 and len(lines) == 3, done.stdout + done.stderr
    assert lines[0].startswith(f"{small} step 1 attention: ignored:") and "attn_layer=2" in lines[0]
    assert lines[1:] == [f"{small} step 2 sampling: ok", f"{small} step 3 fossils: ok"]


@pytest.mark.slow
def test_check_refuses_a_step_whose_page_shows_no_figure(tmp_path):
    """Issue 56: lesson 01 asked the class for the rank of 'queen' on the course model, where ' queen' is two tokens
    and both ranks show "—"; `lesson check` names such a step (a figure the page cannot show) and exits 2."""
    king = tmp_path / "king.yaml"
    step = '  - page: analogies\n    inputs: {an_preset: %s}\n    note: {en: "Rank?", pt: "Posição?"}\n'
    king.write_text('title: {en: "K", pt: "K"}\nsteps:\n' + step % "king" + step % "smaller", encoding="utf-8")
    done = check(king)
    lines = done.stdout.splitlines()
    assert done.returncode == 2 and len(lines) == 2, done.stdout + done.stderr
    assert lines[0] == (f"{king} step 1 analogies: shows no figure for \"Expected word's rank, inputs excluded\"; "
                        "shows no figure for \"Expected word's rank, inputs included\"")
    assert lines[1] == f"{king} step 2 analogies: ok"


@pytest.mark.slow
def test_every_shipped_lesson_passes_check():
    files = sorted((ROOT / "lessons").glob("*.yaml"))
    done = check(*files)
    steps = sum(len(lessons.load(f).steps) for f in files)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == steps and all(line.endswith(": ok") for line in lines), done.stdout


@pytest.mark.parametrize(("case", "text"), CASES, ids=[c for c, _ in CASES])
def test_the_bad_input_matrix_as_a_lesson_file(case, text, tmp_path, capsys):
    """Every case of tests/bad_inputs.py as a lesson file's whole content, and as a step's note: `lesson check`
    prints one line naming the file and exits 2; never a traceback."""
    from lab.cli import main

    whole = tmp_path / "whole.yaml"
    whole.write_bytes(text.encode("utf-8", "replace"))
    assert main(["lesson", "check", str(whole)]) == 2
    out = capsys.readouterr()
    assert out.err == "" and len(out.out.splitlines()) == 1 and out.out.startswith(f"{whole}: ")
    try:  # as a note: loaded as it is, or refused with a LessonError (too long, empty, not YAML), nothing else
        got = lesson(GOOD.replace('"Five seeds."', json.dumps(text, ensure_ascii=False)))
    except lessons.LessonError as e:
        assert e.details["where"].startswith(("step 2, note.en", "line ", "file")), str(e)
    else:
        assert got.steps[1].note["en"] == text


NOTE = {"en": "n", "pt": "n"}
BAD = [  # one lesson (parsed YAML, or text) per problem lab.lessons can name
    [], {"title": NOTE, "steps": [], "x": 1}, {"title": NOTE, "model": "nope", "steps": [{}]},
    {"title": NOTE, "steps": []}, {"title": {"en": "a"}, "steps": [{}]},
    {"title": {"en": "a", "pt": " "}, "steps": [{}]},
    {"title": {"en": "a" * 3000, "pt": "b"}, "steps": [{}]}, {"title": NOTE, "steps": [1]},
    {"title": NOTE, "steps": [{"page": "attention", "note": NOTE, "extra": 1}]},
    {"title": NOTE, "steps": [{"page": "nao_existe", "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "attention", "inputs": [1], "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "attention", "inputs": {"nope": 1}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "home", "inputs": {"nope": 1}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "attention", "inputs": {"attn_layer": 9}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "attention", "inputs": {"attn_layer": 1.5}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "attention", "inputs": {"attn_metric": "nope"}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "attention", "inputs": {"attn_text": 3}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "attention", "inputs": {"attn_text": "x" * 99_999}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "sampling", "inputs": {"samp_temperature": "hot"}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "sampling", "inputs": {"samp_temperature": 1e-9}, "note": NOTE}]},
    {"title": NOTE, "steps": [{"page": "fill", "inputs": {"fill_dynamic": "maybe"}, "note": NOTE}]},  # "yes": on
    {"title": NOTE, "steps": [{"page": "attention", "note": NOTE, "view": "nope"}]},
    "title: [a, b\nsteps: x: y", "x" * 300_000,
]


@pytest.mark.parametrize("bad", BAD, ids=range(len(BAD)))
def test_every_lesson_problem_reads_in_portuguese_details_included(bad):
    """Issue 48, finding 6: the lesson checks' details were English after a Portuguese sentence. Each problem has
    its Portuguese words (no fallback), the field as the file writes it, and no English sentence left."""
    from ui.messages import _lesson_pt

    with pytest.raises(lessons.LessonError) as e:
        lessons.loads(bad, "x") if isinstance(bad, str) else lessons.parse(bad, "x", {"course-gpt2"})
    pt = _lesson_pt(e.value.details["where"], e.value.details["problem"])
    assert "um valor que o app não aceita" not in pt, (e.value.details, pt)  # a pattern knew this problem
    english = re.findall(r"\b(must|is not|outside|characters|mapping|field of|not valid|cannot|larger than|number"
                         r"|one of|step \d|line \d|column|its inputs|its views|too close|quotes|the pages)\b", pt)
    assert english == [], (e.value.details, pt)


def test_an_upload_that_is_not_a_yaml_file_is_refused_by_name():
    with pytest.raises(lessons.LessonError, match="file: is not a .yaml or .yml file"):
        lessons.from_bytes(b"title: {en: a, pt: b}", "x", "lesson.exe")
    assert lessons.from_bytes(Path(lessons.LESSONS_DIR / "03-attention-trophy.yaml").read_bytes(), "x",
                              "LESSON.YML").steps
