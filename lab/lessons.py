"""Lessons: a class as a sequence of views. A lesson file (lessons/NAME.yaml) is read and checked here, whole or
not at all (no Streamlit here).

    title: {en: ..., pt: ...}
    model: course-gpt2            # optional: the offline default otherwise
    steps:
      - page: causal_mask          # a page's url path (app_pages/<page>.py)
        inputs: {mask_text: "..."} # the page's link parameters, with values its link accepts
        note: {en: ..., pt: ...}   # for the teacher
        question: {en: ..., pt: ...}  # optional, for the class (answerable with a kind: below)
        view: all_heads            # optional: which of the page's views the step is about (VIEWS; default the first)

A question with a `kind` can be answered by the class, and lab computes the model's side (lab/questions.py):

    question:
      en: ...; pt: ...
      kind: next-token             # the next word or token after `text` (1..400 characters)
      text: "The Debian package manager"
      passage: " is apt."          # optional: the guessing game walks these tokens one by one (lab/questions.py)
    question: {en: ..., pt: ..., kind: choice,           # 2..6 options, each {en, pt}
               options: [{en: ..., pt: ...}, ...],
               right: 2}                                 # optional, 1-based: a fact the file states; or
               # right_from: cheapest_tokenizer (options' `value`s: encodings; `text`: the sentence) or
               # right_from: previous_token_head (options' `value`s: heads "L.H"; `text`): lab computes it;
               # neither: no option is right (an opinion, a sampler's output)
    question: {en: ..., pt: ..., kind: number, of: tokens, text: "...", encoding: gpt2}  # or of: perplexity (text)

Which inputs each page has, and each one's range or options, come from lab/data/lesson_inputs.json, written by
running every page headless (`python scripts/lesson_headless.py inputs`; a test checks it is current): the pages
stay the one place a range is declared. Ranges that depend on the model or the text are the default model's and
text's; `python -m lab lesson check` then opens every step for real and refuses any value the page ignores.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from lab import link_codec
from lab import pages as manifest
from lab.errors import LabError
from lab.link_codec import LinkValueError

ROOT = Path(__file__).resolve().parent.parent
LESSONS_DIR = ROOT / "lessons"
INPUTS_FILE = Path(__file__).resolve().parent / "data" / "lesson_inputs.json"
LANGS = ("en", "pt")
# The pages a step can name (PAGES) and each page's views, its main one first (VIEWS) come from the page manifest
# (lab/pages.py), read when asked for: in presentation mode a lesson step puts its view on the projector's first
# screen (ui/lesson.py), and the page draws each inside ui.presentation.view(name).
MIN_STEPS, MAX_STEPS = 1, 30
MAX_FILE_BYTES = 200_000
MAX_WORDS = 2_000  # characters of one note, question or title
# Answerable questions (lab/questions.py computes their model side).
KINDS = ("next-token", "choice", "number")
RULES = ("cheapest_tokenizer", "previous_token_head")  # choice: right_from
OF = ("tokens", "perplexity")  # number: of
QUESTION_FIELDS = {"next-token": ("text", "passage"), "choice": ("options", "right", "right_from", "text"),
                   "number": ("of", "text", "encoding")}
ALL_QUESTION_FIELDS = ("en", "pt", "kind", "text", "passage", "options", "right", "right_from", "of", "encoding")
MAX_CONTEXT = 400  # characters of a question's text
MIN_OPTIONS, MAX_OPTIONS = 2, 6
HEAD = re.compile(r"(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})")  # a head as layer.head, e.g. "2.3"
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")  # a lesson's name: its file name without .yaml, and ?lesson=


class LessonError(LabError):
    """A lesson that cannot be used. reason "bad_lesson": details `where` (the step and field, e.g.
    "step 2, inputs.attn_layer") and `problem` (English words). reason "bad_question": an answerable question's
    field, with the same `where` and `problem` and also `step` (1-based), `field` ("question.options"), `code`
    (QUESTION_PROBLEMS, for the reader's language) and the values the words name."""

    reason_default = "bad_lesson"


@dataclass(frozen=True)
class Step:
    page: str
    inputs: dict  # link parameter -> value, as the file gives it
    note: dict  # {"en": ..., "pt": ...}
    question: dict | None = None
    view: str | None = None  # one of VIEWS[page]; None: the page's main view

    @property
    def shows(self) -> str:
        """The view this step is about: its own, or its page's main one."""
        return self.view or manifest.by_slug(self.page).views[0]


@dataclass(frozen=True)
class Lesson:
    name: str
    title: dict
    steps: tuple[Step, ...]
    model: str | None = None
    extra: dict = field(default_factory=dict)


def __getattr__(name: str):
    """PAGES (every page's url path) and VIEWS ({page: its views, main first}), read from the page manifest."""
    derived = {"PAGES": manifest.slugs, "VIEWS": manifest.views}
    if name in derived:
        return derived[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _fail(where: str, problem: str):
    raise LessonError(f"{where}: {problem}", where=where, problem=problem)


@functools.cache
def catalogue() -> dict:
    """{page: {link parameter: {"kind", range or options}}}, as the pages bound them (lab/data/lesson_inputs.json)."""
    return json.loads(INPUTS_FILE.read_text(encoding="utf-8"))


def link_text(value) -> str | None:
    """A lesson value as a link writes it (True -> "true", [a, b] -> "a,b"); None for what no link carries."""
    return link_codec.to_link(value)


def _formatted(value, spec: dict) -> str | None:
    """A value as its page's link writes it: the input's own codec reads the file's value and writes it back
    (a real 0.0 as "0", a whole 2.0 as "2", on as "true")."""
    written = link_codec.to_link(value, spec.get("kind", ""))
    if written is None or "kind" not in spec:
        return written
    codec = link_codec.from_spec(spec)
    try:
        return codec.format(codec.parse(written))
    except LinkValueError:  # not a checked value: as the file gives it
        return written


def link_params(step: Step, short: bool = False, inputs: dict | None = None, lang: str = "en") -> dict[str, str]:
    """The step's inputs as query parameters, written as the page writes them; `short`: without the values equal
    to their default in the UI language `lang` (the page leaves those out of its link too; a default that the
    language changes, the Portuguese text or trophy pair, is the catalogue's "default_pt"). `inputs`: the
    catalogue (the shipped one)."""
    specs = (catalogue() if inputs is None else inputs).get(step.page, {})
    params = {k: _formatted(v, specs.get(k, {})) for k, v in step.inputs.items()}
    return {k: v for k, v in params.items() if not (short and v == default_of(specs.get(k, {}), lang))}


def default_of(spec: dict, lang: str) -> str | None:
    """An input's default link text (the catalogue's) in the UI language `lang`."""
    return spec.get(f"default_{lang}", spec.get("default"))


# What a lesson file must write for each kind, beyond what its link text says: text in quotes, numbers unquoted.
_FILE_TYPES = {"text": (str, "must be text (in quotes)"), "integer": (int | float, "must be a whole number"),
               "real": (int | float, "must be a number")}


def _value_problem(value, spec: dict) -> str | None:
    """Why `value` cannot be this input's, in English; None when it can. The value is read by the input's own
    codec (lab.link_codec: the one its page reads a link with), from the link text the lesson writes for it."""
    kind = spec["kind"]
    wanted, words = _FILE_TYPES.get(kind, (object, ""))
    if not isinstance(value, wanted) or (kind in ("integer", "real") and isinstance(value, bool)):
        return words
    if kind in ("choice", "choices"):  # each item on its own, so that the words name the one that is not an option
        one = link_codec.choice(spec["options"])
        for item in value if kind == "choices" and isinstance(value, list) else [value]:
            if _codec_problem(one, item, kind, spec):
                shown = ", ".join(spec["options"][:12]) + (", ..." if len(spec["options"]) > 12 else "")
                return f"{item!r} is not one of: {shown}"
        return None
    return _codec_problem(link_codec.from_spec(spec), value, kind, spec)


def _codec_problem(codec: link_codec.Codec, value, kind: str, spec: dict) -> str | None:
    """What `codec` says of the link text of `value`, in the lesson's English words; None when it takes it."""
    try:
        written = link_codec.to_link(value, kind)
        if written is None:  # None, a mapping, a list where one value goes: no link carries it
            raise link_codec.refused("not_boolean" if kind == "boolean" else "unknown_choice")
        codec.parse(written)
    except LinkValueError as e:
        words = {"not_boolean": "must be true or false", "not_integer": "must be a whole number",
                 "not_number": "must be a number", "unknown_choice": "is not one of the options",
                 "too_long": f"is {e.details.get('length')} characters; a link carries {e.details.get('max')}",
                 "near_zero": f"{value} is too close to 0 (at least {spec.get('least')})"}
        return words.get(e.reason, f"{value} is outside {spec.get('lo')}..{spec.get('hi')}")  # and not finite
    return None


def _words(data, where: str, optional: bool = False) -> dict | None:
    """A {en, pt} pair of non-empty texts."""
    if data is None and optional:
        return None
    if not isinstance(data, dict) or set(data) != set(LANGS):
        _fail(where, "must have exactly two texts, en and pt")
    for code in LANGS:
        if not isinstance(data[code], str) or not data[code].strip():
            _fail(f"{where}.{code}", "must be a non-empty text")
        if len(data[code]) > MAX_WORDS:
            _fail(f"{where}.{code}", f"is longer than {MAX_WORDS} characters")
    return {code: data[code] for code in LANGS}


def _bad_question(k: int, field: str, code: str, problem: str, **values):
    """LessonError "bad_question" at step k's `field` (see LessonError)."""
    where = f"step {k}, {field}"
    raise LessonError(f"{where}: {problem}", "bad_question", where=where, problem=problem, step=k, field=field,
                      code=code, **values)


def _question(data, k: int) -> dict | None:
    """Step k's question: a plain {en, pt} pair, or an answerable one (a kind and its fields, each checked), as a
    dict whose keys follow ALL_QUESTION_FIELDS."""
    if data is None:
        return None
    where = f"step {k}, question"
    if not isinstance(data, dict):
        _fail(where, "must have exactly two texts, en and pt")
    unknown = sorted(set(map(str, data)) - set(ALL_QUESTION_FIELDS))
    if unknown:
        _bad_question(k, f"question.{unknown[0]}", "not_a_field",
                      f"is not a field of a question ({', '.join(ALL_QUESTION_FIELDS)})",
                      fields=", ".join(ALL_QUESTION_FIELDS))
    words = _words({c: data[c] for c in data if c in LANGS}, where)
    extra = [f for f in ALL_QUESTION_FIELDS[3:] if f in data]
    if "kind" not in data:
        if extra:
            _bad_question(k, f"question.{extra[0]}", "no_kind", "belongs to an answerable question, which needs a "
                          f"kind ({', '.join(KINDS)})", kinds=", ".join(KINDS))
        return words
    kind = data["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        _bad_question(k, "question.kind", "not_one_of", f"{str(kind)[:40]!r} is not one of: {', '.join(KINDS)}",
                      value=str(kind)[:40], known=", ".join(KINDS))
    for f in extra:
        if f not in QUESTION_FIELDS[kind]:
            _bad_question(k, f"question.{f}", "not_for_kind", f"is not a field of a {kind} question (its fields: "
                          f"{', '.join(QUESTION_FIELDS[kind])})", kind=kind, fields=", ".join(QUESTION_FIELDS[kind]))
    fields = {"next-token": lambda: _next_token_fields(data, k), "choice": lambda: _choice_fields(data, k),
              "number": lambda: _number_fields(data, k)}[kind]()
    answerable = words | {"kind": kind} | fields
    return {f: answerable[f] for f in ALL_QUESTION_FIELDS if f in answerable}


def _missing(k: int, field: str, why: str):
    _bad_question(k, f"question.{field}", "missing", f"is missing: {why}", why=why)


def _one_of(k: int, field: str, value, known) -> str:
    """`value` when it is one of `known`, else the refusal naming them."""
    if not isinstance(value, str) or value not in known:
        _bad_question(k, f"question.{field}", "not_one_of", f"{str(value)[:40]!r} is not one of: {', '.join(known)}",
                      value=str(value)[:40], known=", ".join(known))
    return value


def _question_text(data: dict, k: int, field: str = "text") -> str:
    """The question's `text` (the context, the sentence) or `passage`: 1..MAX_CONTEXT characters, not blank."""
    text = data.get(field)
    if text is None:
        _missing(k, field, "this kind of question is about a text")
    if not isinstance(text, str) or not text.strip():
        _bad_question(k, f"question.{field}", "empty_text", "must be a non-empty text")
    if len(text) > MAX_CONTEXT:
        _bad_question(k, f"question.{field}", "long_text", f"is {len(text):,} characters; a question's text is at "
                      f"most {MAX_CONTEXT}", chars=len(text), most=MAX_CONTEXT)
    return text


def _next_token_fields(data: dict, k: int) -> dict:
    """A next-token question's context, and the passage the guessing game walks after it (optional: lab/questions.py
    game())."""
    return {"text": _question_text(data, k)} | ({"passage": _question_text(data, k, "passage")}
                                                if "passage" in data else {})


def _choice_fields(data: dict, k: int) -> dict:
    """A choice's options, and its right one stated (right, 1-based) or computed (right_from, on `text`)."""
    rule, right = data.get("right_from"), data.get("right")
    if rule is not None and right is not None:
        _bad_question(k, "question.right_from", "both", "cannot go with right: the right option is stated (right) "
                      "or computed (right_from), not both")
    if rule is not None:
        _one_of(k, "right_from", rule, RULES)
    out = {"options": _options(data.get("options"), k, rule)}
    if right is not None:
        if isinstance(right, bool) or not isinstance(right, int):
            _bad_question(k, "question.right", "not_whole", "must be a whole number (1 is the first option)")
        if not 1 <= right <= len(out["options"]):
            _bad_question(k, "question.right", "right_range", f"{right} is outside 1..{len(out['options'])}",
                          value=right, most=len(out["options"]))
        out["right"] = right
    if rule is not None:
        out |= {"right_from": rule, "text": _question_text(data, k)}
    elif "text" in data:
        _bad_question(k, "question.text", "text_without_rule", "is read only with right_from (the text the right "
                      "option is computed on)")
    return out


def _options(options, k: int, rule: str | None) -> list[dict]:
    """MIN_OPTIONS..MAX_OPTIONS options, each {en, pt}, and with a rule each its `value` (distinct)."""
    if not isinstance(options, list) or not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        _bad_question(k, "question.options", "options", f"must have {MIN_OPTIONS} to {MAX_OPTIONS} options",
                      least=MIN_OPTIONS, most=MAX_OPTIONS)
    out, seen = [], {}
    for i, option in enumerate(options, 1):
        field = f"question.options[{i}]"  # 1-based, as right is
        if not isinstance(option, dict) or not set(map(str, option)) <= {*LANGS, *(("value",) if rule else ())}:
            _bad_question(k, field, "option", "must have en and pt" + (", and a value (right_from reads it)" if rule
                                                                         else " only"), rule=rule)
        words = _words({c: option[c] for c in option if c in LANGS}, f"step {k}, {field}")
        if rule is not None:
            value = _option_value(option.get("value"), k, f"{field}.value", rule)
            if value in seen:
                _bad_question(k, f"{field}.value", "repeat", f"repeats the value of option {seen[value]}",
                              other=seen[value])
            seen[value] = i
            words["value"] = value
        out.append(words)
    return out


def _option_value(value, k: int, field: str, rule: str) -> str:
    """An option's value for its rule: an encoding the tokens page knows, or a head written "layer.head"."""
    if value is None:
        _missing(k, field.removeprefix("question."), "right_from computes the right option from each option's value")
    if rule == "cheapest_tokenizer":
        from lab.encodings import ENCODINGS

        return _one_of(k, field.removeprefix("question."), value, ENCODINGS)
    if not isinstance(value, str) or not HEAD.fullmatch(value):
        _bad_question(k, field, "head", 'must be a head written layer.head in quotes, e.g. "2.3" (unquoted, 1.10 '
                      "would read as the number 1.1)")
    return value


def _number_fields(data: dict, k: int) -> dict:
    """A number's quantity (of), its text, and for tokens the encoding that counts them."""
    if data.get("of") is None:
        _missing(k, "of", f"a number question says what is counted ({', '.join(OF)})")
    out = {"of": _one_of(k, "of", data["of"], OF), "text": _question_text(data, k)}
    if out["of"] == "tokens":
        from lab.encodings import ENCODINGS

        if data.get("encoding") is None:
            _missing(k, "encoding", "tokens are counted by an encoding")
        out["encoding"] = _one_of(k, "encoding", data["encoding"], ENCODINGS)
    elif "encoding" in data:
        _bad_question(k, "question.encoding", "not_for_of", "is read only with of: tokens (a perplexity is the "
                      "lesson's model's)")
    return out


def _step(data, k: int, inputs: dict) -> Step:
    """Step k (1-based) of a lesson, checked field by field."""
    where = f"step {k}"
    if not isinstance(data, dict):
        _fail(where, "must be a mapping with page, inputs, note")
    unknown = sorted(set(map(str, data)) - {"page", "inputs", "note", "question", "view"})
    if unknown:
        _fail(f"{where}, {unknown[0]}", "is not a field of a step (page, inputs, note, question, view)")
    page, pages = data.get("page"), manifest.slugs()
    if page not in pages:
        _fail(f"{where}, page", f"{page!r} is not a page; the pages: {', '.join(pages)}")
    values = data.get("inputs") or {}
    if not isinstance(values, dict):
        _fail(f"{where}, inputs", "must be a mapping of link parameters to values")
    for key, value in values.items():
        spec = inputs.get(page, {}).get(key)
        if spec is None:
            known = ", ".join(sorted(inputs.get(page, {}))) or "none"
            _fail(f"{where}, inputs.{key}", f"is not an input of the page {page} (its inputs: {known})")
        problem = _value_problem(value, spec)
        if problem:
            _fail(f"{where}, inputs.{key}", problem)
    note = _words(data.get("note"), f"{where}, note")
    view, views = data.get("view"), manifest.by_slug(page).views
    if view is not None and view not in views:
        _fail(f"{where}, view", f"{view!r} is not a view of the page {page} (its views: {', '.join(views)})")
    return Step(page, dict(values), note, _question(data.get("question"), k), view)


def parse(data, name: str, models: set[str] | None = None, inputs: dict | None = None) -> Lesson:
    """A lesson from parsed YAML: every field checked (LessonError names the step and field), or nothing."""
    inputs = catalogue() if inputs is None else inputs
    if not isinstance(data, dict):
        _fail("lesson", "must be a mapping with title, steps (and model)")
    unknown = sorted(set(map(str, data)) - {"title", "model", "steps"})
    if unknown:
        _fail(unknown[0], "is not a field of a lesson (title, model, steps)")
    title = _words(data.get("title"), "title")
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or (models is not None and model not in models)):
        _fail("model", f"{model!r} is not a model the app knows")
    steps = data.get("steps")
    if not isinstance(steps, list) or not MIN_STEPS <= len(steps) <= MAX_STEPS:
        _fail("steps", f"must be a list of {MIN_STEPS} to {MAX_STEPS} steps")
    return Lesson(name, title, tuple(_step(s, k, inputs) for k, s in enumerate(steps, 1)), model)


def loads(text: str, name: str, models: set[str] | None = None) -> Lesson:
    """A lesson from YAML text (the file's or an upload's)."""
    import yaml

    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        _fail("file", f"is larger than {MAX_FILE_BYTES:,} bytes")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "file"
        _fail(at, f"not valid YAML ({getattr(e, 'problem', None) or 'unreadable'})")
    return parse(data, name, models)


def registry_models() -> set[str]:
    """The model names a lesson may pin (the registry's; no torch import)."""
    from lab.models import registry

    return set(registry.REGISTRY)


def load(path: Path) -> Lesson:
    """A lesson file, checked whole (read again only when the file changed: every page in a lesson and the home
    page's list read the shipped files on every run)."""
    try:
        seen = Path(path).stat()
    except OSError:  # _load says why
        return _load(Path(path), None)
    return _load(Path(path).resolve(), (seen.st_mtime_ns, seen.st_size))


@functools.lru_cache(maxsize=64)
def _load(path: Path, version: tuple | None) -> Lesson:
    """load's reading and checking, once per file version (a Lesson is frozen; nothing changes it)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail("file", "no such file")
    except (OSError, UnicodeDecodeError) as e:
        _fail("file", f"cannot be read as UTF-8 text ({type(e).__name__})")
    return loads(text, Path(path).stem, registry_models())


def shipped() -> list[str]:
    """The names of the lessons that ship in lessons/, sorted."""
    return sorted(p.stem for p in LESSONS_DIR.glob("*.yaml") if NAME.fullmatch(p.stem))


def named(name: str) -> Lesson:
    """A shipped lesson by name (?lesson=NAME); LessonError for a name that is not one."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or name not in shipped():
        _fail("lesson", f"{name[:40]!r} is not a shipped lesson" if isinstance(name, str) else "no such lesson")
    return load(LESSONS_DIR / f"{name}.yaml")


# Making a lesson in the app: a view recorded as a step, the draft written as a file (ui/lesson_maker.py draws).
def typed(text: str, spec: dict):
    """A link's value (text) as a lesson file writes this input (its kind): 3, 0.7, true, [a, b] or text, read by
    the rules links are read with (lab.link_codec; text a kind cannot read stays text, for parse() to name)."""
    return link_codec.from_link(text, spec.get("kind", ""))


def step_data(page: str, params: dict[str, str], note: dict) -> dict:
    """A step as a lesson file holds it, for the view of `page` whose link carries `params` (only the page's own
    inputs are kept, typed as a file writes them; a value equal to its default is left out, as the page's link
    leaves it out)."""
    specs = catalogue().get(page, {})
    inputs = {k: typed(v, specs[k]) for k, v in params.items() if k in specs and v != specs[k].get("default")}
    return {"page": page, "inputs": inputs, "note": dict(note)}


def data(lesson: Lesson) -> dict:
    """A checked lesson as its file holds it (parse(data(lesson)) gives it back)."""
    steps = [{"page": s.page, "inputs": dict(s.inputs), "note": dict(s.note)}
             | ({"question": copy.deepcopy(s.question)} if s.question else {}) | ({"view": s.view} if s.view else {})
             for s in lesson.steps]
    return {"title": dict(lesson.title)} | ({"model": lesson.model} if lesson.model else {}) | {"steps": steps}


def step_link(lesson: Lesson, k: int, lang: str, default_model: str) -> dict[str, str]:
    """Step k's link parameters (the lesson and step, the language, the model, the step's inputs as its page writes
    them): what ui.lesson puts in the address, and what `python -m lab lesson warm` asks the running app for."""
    params = {"lang": lang, "model": lesson.model or default_model, "lesson": lesson.name, "step": str(k)}
    return params | link_params(lesson.steps[k - 1], short=True, lang=lang)


def from_bytes(raw: bytes, name: str, file_name: str | None = None) -> Lesson:
    """A lesson from a file's bytes (an upload, named `file_name`: a .yaml or .yml file), checked as a shipped file
    is."""
    if file_name is not None and not file_name.lower().endswith((".yaml", ".yml")):
        _fail("file", "is not a .yaml or .yml file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        _fail("file", "cannot be read as UTF-8 text")
    return loads(text, name, registry_models())


def dumps(lesson: Lesson) -> str:
    """A checked lesson as a YAML file (UTF-8 text: accents as they are), readable by loads() as it was: a text
    holding U+0085 (NEL) is written double-quoted, where it is escaped (PyYAML writes it raw in single quotes,
    and reads it back as a line break: found by tests/test_link_codec.py)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s,
                                                                  style='"' if "\x85" in s else None))
    return yaml.dump(data(lesson), Dumper=Dumper, allow_unicode=True, sort_keys=False, width=100)
