"""The app run headless (Streamlit's AppTest) for lessons; Streamlit lives here, outside lab/ (lab/cli/lessons.py
starts this script in a fresh interpreter).

    python scripts/lesson_headless.py inputs [OUT]  # writes lab/data/lesson_inputs.json (or OUT): every page's inputs
    python scripts/lesson_headless.py steps FILE... # one JSON line per step of each lesson FILE (its "file")

`inputs` opens every page (plus the views in extra(), whose inputs appear only when another input says so) and
records each input a page binds (ui.url_state.INPUTS): its link parameter and the range or options of its codec,
as the offline default model and the default texts give them. `steps` opens each step's page with its inputs as a
link would carry them and reports an exception, a value the page ignored, or a key the page never bound.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from streamlit.testing.v1 import AppTest  # noqa: E402

from lab import lessons  # noqa: E402
from lab.link_codec import describe  # noqa: E402

APP = str(ROOT / "app.py")
TIMEOUT = 600
# Views whose inputs show only when another input asks for them: (page, link parameters), the pages' own text
# boxes as the manifest names the choice that reveals them (lab.pages.Page.own_text). The heatmap and grid windows
# of a long text (attn_start, lens_start) are left out: their range is the text's, not the page's.
# Views whose inputs appear only once the reader opens them (not a text box: lab/pages.py's own_text names those):
# the sampling page's comparison B, generated only when opened (issue 57).
OPENED = [("sampling", {"samp_compare": "pair"})]


def extra() -> list[tuple[str, dict]]:
    """The views to open besides each page's default one: each page's own text box (the manifest's own_text) and
    OPENED."""
    from lab import pages as manifest

    return [(p.slug, dict(p.own_text)) for p in manifest.PAGES if p.own_text] + OPENED


# What a page's figure (st.metric) shows when it has none for the step's inputs (a rank of a word of several tokens):
# a step whose page shows one cannot ask the class about it (the note or question would name a figure not there).
NO_FIGURE = ("—", "-", "", "None", "nan")


def merge(old: dict | None, new: dict) -> dict:
    """One input seen twice (two views): options joined, the wider range, the default of the view that showed it
    first (the page's default view: a link leaves out the value the page opens on, not the one another view gives,
    e.g. the heads page's score, "previous" only on the reader's own text)."""
    if old is None or old["kind"] != new["kind"]:
        return new
    first = {"default": old["default"]} if "default" in old else {}
    if "options" in new:
        return new | {"options": old["options"] + [o for o in new["options"] if o not in old["options"]]} | first
    if "lo" in new:
        return new | {"lo": min(old["lo"], new["lo"]), "hi": max(old["hi"], new["hi"])} | first
    return new | first


def page_inputs(at: AppTest) -> dict:
    """{page: {key: (codec, default)}} that the session bound so far."""
    from ui.url_state import INPUTS

    return at.session_state[INPUTS] if INPUTS in at.session_state else {}


def open_view(page: str, params: dict, model: str | None = None) -> AppTest:
    """The app as a link to `page` with `params` opens it: entry run, then the page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    if model:
        at.query_params["model"] = model
    at.run()
    if page != "home":
        at.switch_page(f"app_pages/{page}.py")
        at.run()
    return at


def inputs() -> dict:
    """Every page's inputs, from running the pages (extra()'s views too) in English, then their Portuguese defaults
    where the UI language changes them (the perplexity page's text, the trophy pair): "default_pt"."""
    catalogue: dict[str, dict] = {}
    views = [(p, {}) for p in lessons.PAGES] + extra()
    for page, params in views:
        at = open_view(page, params)
        if at.exception:
            raise SystemExit(f"{page}: {at.exception[0].value}")
        for key, (codec, default) in page_inputs(at).get(page, {}).items():
            catalogue.setdefault(page, {})[key] = merge(catalogue.get(page, {}).get(key), describe(codec, default))
        print(page, len(catalogue.get(page, {})), file=sys.stderr)
    seen: dict[str, set] = {}
    for page, params in views:
        portuguese_defaults(page, params, catalogue.get(page, {}), seen.setdefault(page, set()))
    return {p: dict(sorted(catalogue.get(p, {}).items())) for p in lessons.PAGES}


def portuguese_defaults(page: str, params: dict, specs: dict, seen: set) -> None:
    """Add "default_pt" to each of `specs` whose default the page gives otherwise in Portuguese, read in the view
    that showed the input first (as merge keeps its English default); `seen`: the inputs read already."""
    at = open_view(page, params | {"lang": "pt"})
    if at.exception:
        raise SystemExit(f"{page} (pt): {at.exception[0].value}")
    for key, (codec, default) in page_inputs(at).get(page, {}).items():
        spec, first = specs.get(key), key not in seen
        seen.add(key)
        written = describe(codec, default).get("default")
        if first and spec is not None and "default" in spec and written != spec["default"]:
            spec["default_pt"] = written


def step_report(lesson: lessons.Lesson, k: int) -> dict:
    """What opening step k (1-based) showed: ok, or the problems."""
    step = lesson.steps[k - 1]
    at = open_view(step.page, lessons.link_params(step), lesson.model)
    problems = [f"exception: {e.value}" for e in at.exception]
    problems += [f"ignored: {w.value}" for w in at.warning if "Ignored from the link" in w.value]
    bound = page_inputs(at).get(step.page, {})
    problems += [f"input {key!r} is not on the page" for key in step.inputs if key not in bound]
    problems += [f"shows no figure for {m.label!r}" for m in at.metric if str(m.value).strip() in NO_FIGURE]
    return {"step": k, "page": step.page, "problems": problems}


def main(argv: list[str]) -> int:
    if argv[:1] == ["inputs"] and len(argv) <= 2:
        out = Path(argv[1] if len(argv) == 2 else lessons.INPUTS_FILE)
        out.write_text(json.dumps(inputs(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return 0
    if argv[:1] == ["steps"] and len(argv) >= 2:  # one interpreter for every file: the models load once
        for path in argv[1:]:
            lesson = lessons.load(Path(path))
            for k in range(1, len(lesson.steps) + 1):
                print(json.dumps(step_report(lesson, k) | {"file": path}, ensure_ascii=False), flush=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
