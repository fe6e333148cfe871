"""The bad-input matrix against every CLI command (issue 12): every case of tests/bad_inputs.py, and garbage
names and numbers, fed to every command that takes text, names or numbers.

Expected for each (command, case): exit 0 with valid output (JSON that parses with --json, nothing on stderr),
or exit 2 with exactly one readable line on stderr, "lab: error: ...", and nothing on stdout. Never an uncaught
exception, never exit 1. Most cases run in-process through `lab.cli.main`, with streams built like a real
process's (a strict UTF-8 stdout: printing a lone surrogate raises there as it would in a terminal); a few need
a real process: argv made from raw bytes, library warnings written to the real stderr.

Left out on purpose: `perplexity` and `detect` on the 200,000-character text (75,000 tokens of tiny-model windows take
minutes on this machine; the cost is linear, not a failure), the encoder's pseudo-perplexity (one forward
pass per token) on the three texts over 1,000 characters, and a real `corpus` download or training run
(collect and train_one are stubbed; everything before them runs for real).
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest

from lab.cli import MESSAGE_CHARS, main
from tests.bad_inputs import CASES, LONG, URL_CASES

pytestmark = pytest.mark.slow  # every case on every command, and real processes: minutes (docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]
UNREADABLE = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # what an error line must not carry raw: controls, bidi, breaks
# Garbage for numeric options: a link's hand-crafted values, and a few more edges.
NUMBERS = [v for _, v in URL_CASES] + ["0", "-0", str(10**30), "-1e30", "1e-320"]
# Names that are no model, beyond the cases: a home folder that does not exist, a folder, a file.
EXTRA_NAMES = [("tilde user", "~nobody-xq/modelo"), ("a folder", str(ROOT / "tests")),
               ("a file", str(ROOT / "tests" / "bad_inputs.py")), ("dev null", os.devnull),
               ("registry name and a space", "gpt2 ")]


class Reached(Exception):
    """Raised by a stub where the real work (a download, a training loop) would begin."""


def run_cli(argv: list[str], stdin: bytes = b"", stdout_encoding: str = "utf-8") -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of lab.cli.main(argv), with streams like a real process's: stdout strict
    in its encoding (UTF-8 unless told), stderr with backslashreplace; an uncaught exception is re-raised."""
    raw_out, raw_err = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(raw_out, encoding=stdout_encoding, errors="strict", newline="\n")
    err = io.TextIOWrapper(raw_err, encoding="utf-8", errors="backslashreplace", newline="\n")
    old_in = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            finally:
                out.flush()
                err.flush()
    finally:
        sys.stdin = old_in
    return rc, raw_out.getvalue().decode(stdout_encoding), raw_err.getvalue().decode("utf-8")


def _no_nan(name: str) -> float:
    """json.loads' parse_constant: Infinity is a value the contracts use (an infinite perplexity); NaN is not."""
    if name == "NaN":
        raise ValueError("NaN in the JSON")
    return float(name)


def problem(rc: int, out: str, err: str, as_json: bool) -> str | None:
    """Why (rc, out, err) breaks the contract, or None when it keeps it."""
    if rc == 0:
        if err:
            return f"exit 0 but stderr {err[:300]!r}"
        if as_json:
            try:
                json.loads(out, parse_constant=_no_nan)
            except ValueError as e:
                return f"exit 0 but stdout is not JSON ({e}): {out[:200]!r}"
        return None
    if rc != 2:
        return f"exit {rc}; stderr {err[:300]!r}"
    if out:
        return f"exit 2 but stdout {out[:200]!r}"
    if not err.endswith("\n") or err.count("\n") != 1 or not err.startswith("lab: error: "):
        return f"exit 2 but stderr is not one 'lab: error: ' line: {err[:300]!r}"
    line = err[:-1]
    if len(line) > MESSAGE_CHARS + 60:
        return f"an error line of {len(line):,} characters: {line[:120]!r}"
    raw = sorted({f"U+{ord(c):04X}" for c in line if unicodedata.category(c) in UNREADABLE})
    if raw:
        return f"raw control/format characters {raw} in {line[:200]!r}"
    return None


def sweep(forms: dict, values: list[tuple[str, str]], expect_2: bool = False, **kw) -> int:
    """Run every form on every value; fail listing every (form, value) that breaks the contract. Returns the
    number of runs. A form is (argv builder, stdin builder or None); expect_2: only exit 2 is right."""
    failures, n = [], 0
    for label, build in forms.items():
        for name, value in values:
            argv = build(value)
            if argv is None:  # this form leaves this value out (documented where it does)
                continue
            n += 1
            try:
                rc, out, err = run_cli(argv, **kw)
            except Reached:
                continue  # the real work was about to start: every check before it passed
            except BaseException as e:  # noqa: BLE001 - the point is to catch anything at all
                failures.append(f"{label} / {name}: uncaught {type(e).__name__}: {str(e)[:200]}")
                continue
            why = problem(rc, out, err, "--json" in argv) or (
                f"exit {rc}, expected 2: {out[:100]!r}" if expect_2 and rc != 2 else None)
            if why:
                failures.append(f"{label} / {name}: {why}")
    assert not failures, f"{len(failures)} of {n} runs broke the contract:\n" + "\n".join(failures)
    return n


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Torch on one thread for this module: the machine's two cores are shared, and two threads then crawl."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


_LOADED: dict = {}


@pytest.fixture
def fast_load(monkeypatch, tiny_model_dirs):
    """lab.models.load memoised for the tiny models (the commands only read a model); any other name goes to
    the real loader, so bad names meet the real checks."""
    import lab.models

    real, tiny = lab.models.load, {str(Path(p).resolve()) for p in tiny_model_dirs.values()}

    def load(name_or_path):
        try:
            key = lab.models.canonical(name_or_path)
        except (OSError, RuntimeError, ValueError):  # not a path at all: the real loader says so
            key = None
        if key not in tiny:
            return real(name_or_path)
        if key not in _LOADED:
            _LOADED[key] = real(name_or_path)
        return _LOADED[key]

    monkeypatch.setattr(lab.models, "load", load)
    return {arch: str(p) for arch, p in tiny_model_dirs.items()}


@pytest.fixture(scope="module")
def case_files(tmp_path_factory):
    """{case name: path}: each case's text in a file, UTF-8 (a lone surrogate written as the invalid bytes
    ED A0 80, what such a file holds)."""
    root = tmp_path_factory.mktemp("cases")
    paths = {}
    for i, (name, text) in enumerate(CASES):
        paths[name] = root / f"case{i}.txt"
        paths[name].write_bytes(text.encode("utf-8", "surrogatepass"))
    return {k: str(v) for k, v in paths.items()}


@pytest.fixture(scope="module")
def fake_corpus(tmp_path_factory):
    """A tiny corpus written by the real `lab.course.corpus.build`, the Debian download replaced by 24 documents."""
    from lab.course import corpus

    real = corpus.collect
    corpus.collect = lambda work, log=print: (_documents(), {"fake": "1"})
    try:
        path = tmp_path_factory.mktemp("corpus")
        corpus.build(path, tmp_path_factory.mktemp("work"), log=lambda s: None)
    finally:
        corpus.collect = real
    return str(path)


def _documents() -> list[dict]:
    return [{"text": f"documento {i}: o gato dormiu. the cat slept {i} times.", "lang": ("en", "pt")[i % 2],
             "source": "fake:" + ("en", "pt")[i % 2]} for i in range(24)]


@pytest.fixture
def course_stubs(monkeypatch, tmp_path, fake_corpus):
    """Stubs where the real work starts: the Debian download (corpus.collect makes its work folder, as fetch
    does, then hands over documents), the training loop (train_one checks its budget, then raises Reached)
    and the evaluation (checks its window limit and device). Everything before them runs for real.
    The working directory is tmp_path: relative output folders land there."""
    import math

    import torch

    from lab.course import corpus, evaluate, train

    def collect(work, log=print):
        (Path(work) / "debs").mkdir(parents=True, exist_ok=True)
        return _documents(), {"fake": "1"}

    def train_one(kind, cfg, data, device, seed, log=print, init=None):
        assert cfg["steps"] is None or (isinstance(cfg["steps"], int) and cfg["steps"] >= 1), cfg
        assert cfg["minutes"] is None or (math.isfinite(cfg["minutes"]) and cfg["minutes"] > 0), cfg
        raise Reached

    def evaluate_run(out, corpus_dir, device="cpu", training=None, limit=None, log=print):
        assert limit is None or limit >= 1, limit
        torch.zeros(1).to(device)
        return {"training": {}, "decoder": {"ok": True}}

    monkeypatch.setattr(corpus, "collect", collect)
    monkeypatch.setattr(train, "train_one", train_one)
    monkeypatch.setattr(evaluate, "run", evaluate_run)
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    (runs / "course-gpt2").mkdir(parents=True)
    return SimpleNamespace(corpus=fake_corpus, runs=str(runs))


# ---------------------------------------------------------------- text: every case, every command that reads text

def text_forms(m: dict, files: dict) -> dict:
    """label -> (case text -> argv), for every command and every way it takes text; `name` is looked up in
    files through the text (each case's file)."""
    g, r = m["gpt2"], m["roberta"]
    by_text = {text: files[name] for name, text in CASES}
    f = by_text.__getitem__
    not_long = lambda argv: (lambda t: None if t == LONG else argv(t))  # noqa: E731 - see the module docstring
    short = lambda argv: (lambda t: None if len(t) > 1000 else argv(t))  # noqa: E731 - one forward per token
    return {
        "tokens FILE": lambda t: ["tokens", "--json", f(t)],
        "tokens table": not_long(lambda t: ["tokens", "--encoding", "gpt2", f(t)]),
        "premium --en --pt": lambda t: ["premium", "--json", "--en", f(t), "--pt", f(t)],
        "attention --text": lambda t: ["attention", "--json", "--model", g, "--text", t],
        "attention --file (table)": lambda t: ["attention", "--model", g, "--file", f(t)],
        "trophy --a/--b": lambda t: ["trophy", "--json", "--model", g, "--a", f"{t} cat", "--b", "the cat",
                                     "--word", "cat"],
        "trophy --word": lambda t: ["trophy", "--json", "--model", g, "--a", "o gato", "--b", "um gato",
                                    "--word", t],
        "perplexity gpt2": not_long(lambda t: ["perplexity", "--json", "--model", g, "--file", f(t)]),
        "perplexity roberta (table)": short(lambda t: ["perplexity", "--model", r, "--file", f(t)]),
        "detect gpt2": not_long(lambda t: ["detect", "--json", "--model", g, "--file", f(t), "--observer", g]),
        "lens --text": lambda t: ["lens", "--json", "--model", g, "--text", t, "--top", "3"],
        "lens --target": lambda t: ["lens", "--model", g, "--text", "the cat sat", "--target", t],
        "analogy A": lambda t: ["analogy", "--json", "--model", g, t, "man", "woman", "--mean-pieces"],
        "analogy --expected (table)": lambda t: ["analogy", "--model", g, "king", "man", "woman", "--expected", t],
        "neighbours --mean-pieces": lambda t: ["neighbours", "--json", "--model", g, t, "--mean-pieces", "--k", "3"],
        "neighbours (table)": lambda t: ["neighbours", "--model", g, t, "--no-space"],
        "next --prompt": lambda t: ["next", "--json", "--model", g, "--prompt", t, "--top", "5"],
        "next (table)": lambda t: ["next", "--model", g, "--prompt", t, "--top", "3", "--temperature", "0.5"],
        "sample --prompt": lambda t: ["sample", "--json", "--model", g, "--prompt", t, "--seed", "3",
                                      "--max-new-tokens", "2", "--top-p", "0.9"],
        "trace --text": lambda t: ["trace", "--json", "--model", g, "--text", t, "--layer", "1", "--head", "3"],
        "fill --text": lambda t: ["fill", "--json", "--model", r, "--text", f"{t} <mask>", "--top", "3"],
        "fill --compare": lambda t: ["fill", "--json", "--model", r, "--compare", g, "--text", t],
    }


def test_every_text_case_on_every_text_command(fast_load, case_files):
    texts = [(name, text) for name, text in CASES]
    assert len(texts) >= 33
    n = sweep(text_forms(fast_load, case_files), texts)
    assert n == 22 * len(CASES) - 3 - sum(len(t) > 1000 for _, t in CASES)  # the skips of text_forms


def test_every_case_from_stdin():
    failures = []
    for name, text in CASES:
        rc, out, err = run_cli(["tokens", "--json", "-"], stdin=text.encode("utf-8", "surrogatepass"))
        why = problem(rc, out, err, True)
        if why:
            failures.append(f"{name}: {why}")
        elif rc == 0:
            costs = json.loads(out)["encodings"]
            want = text[1:] if text.startswith("\ufeff") else text  # read_text drops a leading BOM
            assert all(c["chars"] == len(want) for c in costs.values()), (name, costs)
    assert not failures, failures


def test_lone_surrogates_are_refused_in_one_line(fast_load):
    """A lone surrogate reached the tokenizer as a TypeError traceback; now every text argument refuses it."""
    g = fast_load["gpt2"]
    for argv in (["next", "--model", g, "--prompt", "antes \ud800 depois"],
                 ["analogy", "--model", g, "a", "b", "\udce9"],
                 ["lens", "--model", g, "--text", "x", "--target", "\udfff"],
                 ["trophy", "--model", g, "--a", "o \udce9 gato", "--b", "o gato", "--word", "gato"]):
        rc, out, err = run_cli(argv)
        assert problem(rc, out, err, False) is None and rc == 2, (argv, err)
        assert "not valid UTF-8 text (a lone surrogate U+" in err, err


# ---------------------------------------------------------------- names: models, files, options that name things

def test_bad_model_names_on_every_model_command(fast_load, case_files):
    one = case_files["one char"]
    forms = {
        "attention": lambda v: ["attention", "--json", "--model", v, "--text", "the cat"],
        "trophy": lambda v: ["trophy", "--json", "--model", v],
        "perplexity": lambda v: ["perplexity", "--json", "--model", fast_load["gpt2"], "--model", v, "--file",
                                 case_files["cjk"]],
        "lens": lambda v: ["lens", "--json", "--model", v, "--text", "the cat"],
        "detect": lambda v: ["detect", "--json", "--model", v, "--file", case_files["cjk"]],
        "detect --observer": lambda v: ["detect", "--json", "--model", fast_load["gpt2"], "--observer", v, "--file",
                                        case_files["cjk"]],
        "analogy": lambda v: ["analogy", "--json", "--model", v, "a", "b", "c"],
        "neighbours": lambda v: ["neighbours", "--json", "--model", v, "cat"],
        "next": lambda v: ["next", "--json", "--model", v, "--prompt", "the cat"],
        "sample": lambda v: ["sample", "--json", "--model", v, "--prompt", "the cat", "--seed", "1",
                             "--max-new-tokens", "1"],
        "trace": lambda v: ["trace", "--json", "--model", v, "--text", "the cat"],
        "fill": lambda v: ["fill", "--json", "--model", v, "--text", "the <mask> sat"],
        "fill --compare": lambda v: ["fill", "--json", "--model", fast_load["roberta"], "--compare", v, "--text",
                                     "the cat"],
        "loadtest --in-process": lambda v: ["loadtest", "--json", "--in-process", v, "--requests", "1",
                                            "--max-tokens", "1"],
        "loadtest --serve": lambda v: ["loadtest", "--json", "--serve", v, "--requests", "1", "--max-tokens", "1"],
    }
    names = CASES + EXTRA_NAMES
    n = sweep(forms, names, expect_2=True)
    n += sweep({"perplexity --file": lambda v: ["perplexity", "--model", fast_load["gpt2"], "--file", v],
                "attention --file": lambda v: ["attention", "--model", fast_load["gpt2"], "--file", v],
                "tokens FILE": lambda v: ["tokens", v], "premium --pt": lambda v: ["premium", "--en", one, "--pt", v],
                "detect --file": lambda v: ["detect", "--model", fast_load["gpt2"], "--file", v]},
               [(k, v) for k, v in names if v not in (str(ROOT / "tests" / "bad_inputs.py"), os.devnull)],
               expect_2=True)
    assert n == 20 * len(names) - 5 * 2


def test_bad_names_on_models_prefetch_bench_and_encodings(monkeypatch, tmp_path):
    import lab.cli.bench
    from lab.benchmarks import entry

    monkeypatch.setenv("HF_HOME", str(tmp_path))  # prefetch never reaches a real cache (nor the hub: offline)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    fake = SimpleNamespace(import_module=lambda name: SimpleNamespace(benchmarks=lambda: [entry(name, 1.0, 2.0, 1.0)]))
    monkeypatch.setattr(lab.cli.bench, "importlib", fake)  # bench's selection runs for real, the timing does not
    names = CASES + EXTRA_NAMES
    n = sweep({"prefetch NAME": lambda v: ["prefetch", v], "models EXTRA": lambda v: ["models", "--json", v],
               "tokens --encoding": lambda v: ["tokens", "--encoding", v, "-"],
               "premium --encoding": lambda v: ["premium", "--sample", "--encoding", v]}, names, expect_2=True)
    n += sweep({"bench --only": lambda v: ["bench", "--json", "--only", v]}, names)
    assert n == 5 * len(names)


def test_bad_names_and_paths_on_corpus_train_and_course_eval(course_stubs):
    c, runs = course_stubs.corpus, course_stubs.runs
    Path("a-file.txt").write_text("not a folder")
    # EXTRA_NAMES, with the folder and the file inside tmp_path (a corpus written there is thrown away)
    extra = [(k, {str(ROOT / "tests"): ".", str(ROOT / "tests" / "bad_inputs.py"): "a-file.txt"}.get(v, v))
             for k, v in EXTRA_NAMES]
    base = ["--corpus", c, "--models", "decoder", "--preset", "smoke"]
    forms = {
        "corpus --out": lambda v: ["corpus", "--json", "--out", v, "--work", "work"],
        "corpus --work": lambda v: ["corpus", "--out", "out", "--work", v],
        "train --out": lambda v: ["train", *base, "--out", v],
        "train --corpus": lambda v: ["train", *base, "--corpus", v, "--out", "o"],
        "train --device": lambda v: ["train", *base, "--device", v, "--out", "o"],
        "train --models": lambda v: ["train", *base, "--models", v, "--out", "o"],
        "train --init": lambda v: ["train", *base, "--init", v, "--out", "o"],
        "train --preset": lambda v: ["train", *base, "--preset", v, "--out", "o"],
        "course-eval --dir": lambda v: ["course-eval", "--json", "--corpus", c, "--dir", v],
        "course-eval --corpus": lambda v: ["course-eval", "--json", "--dir", runs, "--corpus", v],
        "course-eval --device": lambda v: ["course-eval", "--json", "--dir", runs, "--corpus", c, "--device", v],
    }
    n = sweep(forms, CASES + extra)
    assert n == 11 * (len(CASES) + len(extra))
    assert not (ROOT / "tests" / "tokens").exists() and not (ROOT / "tests" / "debs").exists()


def test_a_good_corpus_train_and_course_eval_still_reach_the_work(course_stubs):
    """The guards above must not refuse good input: each command gets to its (stubbed) work."""
    c = course_stubs.corpus
    rc, out, err = run_cli(["corpus", "--json", "--out", "new/corpus", "--work", "new/work"])
    assert rc == 0 and json.loads(out.splitlines()[-1])["splits"]["train"]["all"]["documents"] > 0, err
    with pytest.raises(Reached):
        run_cli(["train", "--corpus", c, "--models", "decoder", "--preset", "smoke", "--out", "runs/x",
                 "--device", "auto", "--seed", "7", "--minutes", "0.5", "--eval-windows", "2"])
    rc, out, err = run_cli(["course-eval", "--json", "--dir", course_stubs.runs, "--corpus", c, "--device", "auto"])
    assert rc == 0 and json.loads(out) == {"decoder": {"ok": True}}, err


# ---------------------------------------------------------------- numbers: nan, inf, -5, 1e999 ... for every option

def test_garbage_numbers_on_every_numeric_option(fast_load, case_files, course_stubs):
    g, text = fast_load["gpt2"], case_files["rtl arabic"]
    c = course_stubs.corpus
    opts = {
        "attention --max-floats": ["attention", "--json", "--model", g, "--text", "the cat sat", "--max-floats"],
        "lens --top": ["lens", "--json", "--model", g, "--text", "the cat sat", "--top"],
        "lens --position": ["lens", "--json", "--model", g, "--text", "the cat sat", "--position"],
        "perplexity --stride": ["perplexity", "--json", "--model", g, "--file", text, "--stride"],
        "analogy --k": ["analogy", "--json", "--model", g, "a", "b", "c", "--k"],
        "neighbours --k": ["neighbours", "--json", "--model", g, "cat", "--k"],
        "next --temperature": ["next", "--json", "--model", g, "--prompt", "o gato", "--temperature"],
        "next --top-k": ["next", "--json", "--model", g, "--prompt", "o gato", "--top-k"],
        "next --top-p": ["next", "--json", "--model", g, "--prompt", "o gato", "--top-p"],
        "next --top": ["next", "--json", "--model", g, "--prompt", "o gato", "--top"],
        "sample --seed": ["sample", "--json", "--model", g, "--prompt", "o gato", "--max-new-tokens", "2", "--seed"],
        "sample --max-new-tokens": ["sample", "--json", "--model", g, "--prompt", "o gato", "--seed", "1",
                                    "--max-new-tokens"],
        "sample --temperature": ["sample", "--json", "--model", g, "--prompt", "o gato", "--seed", "1",
                                 "--max-new-tokens", "2", "--temperature"],
        "sample --top-k": ["sample", "--json", "--model", g, "--prompt", "o gato", "--seed", "1",
                           "--max-new-tokens", "2", "--top-k"],
        "sample --top-p": ["sample", "--json", "--model", g, "--prompt", "o gato", "--seed", "1",
                           "--max-new-tokens", "2", "--top-p"],
        "train --seed": ["train", "--corpus", c, "--preset", "smoke", "--models", "decoder", "--seed"],
        "train --minutes": ["train", "--corpus", c, "--preset", "smoke", "--models", "decoder", "--minutes"],
        "train --steps": ["train", "--corpus", c, "--preset", "smoke", "--models", "decoder", "--steps"],
        "train --eval-windows": ["train", "--corpus", c, "--preset", "smoke", "--models", "decoder",
                                 "--eval-windows"],
        "course-eval --eval-windows": ["course-eval", "--json", "--dir", course_stubs.runs, "--corpus", c,
                                       "--eval-windows"],
    }
    forms = {label: (lambda v, argv=argv: [*argv, v]) for label, argv in opts.items()}
    n = sweep(forms, [(v, v) for v in NUMBERS])
    assert n == len(opts) * len(NUMBERS)


def test_garbage_numbers_are_refused_before_any_work(course_stubs):
    """nan, inf, a negative budget or count, a seed numpy refuses: exit 2 before training, not a crash inside."""
    c = course_stubs.corpus
    base = ["train", "--corpus", c, "--preset", "smoke", "--models", "decoder", "--out", "o"]
    for extra, message in ((["--minutes", "nan"], "--minutes must be a positive number"),
                           (["--minutes", "1e999"], "--minutes must be a positive number"),
                           (["--minutes", "-5"], "--minutes must be a positive number"),
                           (["--steps", "-5"], "--steps must be at least 1"),
                           (["--eval-windows", "0"], "--eval-windows must be at least 1"),
                           (["--seed", "-5"], "--seed must be between 0 and 2**32 - 1"),
                           (["--device", "nonsense"], "not a device"),
                           (["--models", "decoder,encoder", "--init", str(ROOT / "models" / "course-gpt2")],
                            "--init")):
        rc, out, err = run_cli([*base, *extra])
        assert rc == 2 and message in err and problem(rc, out, err, False) is None, (extra, err)


# ---------------------------------------------------------------- what reaches stdout

NOT_UTF8 = b"-\xe9"  # a byte that is not UTF-8 in a folder name; Python names it with U+DCE9


def test_a_lone_surrogate_in_the_output_prints_as_valid_json_and_tables(course_stubs, monkeypatch, tmp_path,
                                                                         tiny_model_dirs):
    """A folder whose name is not UTF-8 reaches stdout: in `train --json`'s saved paths, in prefetch's cache
    folder. On a real (strict UTF-8) stdout both raised UnicodeEncodeError: print_json now writes the
    document ASCII-escaped (the name reads back exactly), a plain line writes \\udce9."""
    from lab.course import train
    from tests.test_models import fake_hub_cache

    out = "runs" + os.fsdecode(NOT_UTF8)
    monkeypatch.setattr(train, "run", lambda preset, corpus, out, *a, **k: {  # what the real run returns
        "training": {"decoder": {"saved": str(Path(out) / "course-gpt2")}}})
    rc, stdout, err = run_cli(["train", "--json", "--corpus", course_stubs.corpus, "--models", "decoder",
                               "--out", out])
    assert problem(rc, stdout, err, True) is None and rc == 0, err
    assert json.loads(stdout)["training"]["decoder"]["saved"] == f"{out}/course-gpt2"

    home = tmp_path / ("hf" + os.fsdecode(NOT_UTF8))
    fake_hub_cache(home / "hub", "FacebookAI/roberta-base", tiny_model_dirs["roberta"])
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    rc, stdout, err = run_cli(["prefetch", "roberta-base"])
    assert problem(rc, stdout, err, False) is None and rc == 0, err
    assert "roberta-base: ready offline" in stdout and "hf-\\udce9" in stdout


def test_a_model_folder_whose_name_is_not_utf8_is_one_line(fast_load, tmp_path, case_files):
    """safetensors cannot open such a path: a clear exit 2, not a traceback."""
    path = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"modelo" + NOT_UTF8)))
    shutil.copytree(fast_load["gpt2"], path)
    rc, out, err = run_cli(["perplexity", "--json", "--model", str(path), "--file", case_files["cjk"]])
    assert problem(rc, out, err, True) is None and rc == 2 and "cannot load" in err, err


def test_json_on_a_stdout_that_is_not_utf8_stays_valid(fast_load):
    """A console in Latin-1 (PYTHONIOENCODING, Windows code pages): the echoed word holds emoji beyond the BMP,
    which backslashreplace would write as \\U0001f469, not JSON; print_json writes the document ASCII-escaped."""
    argv = ["neighbours", "--json", "--model", fast_load["gpt2"], dict(CASES)["emoji zwj"], "--mean-pieces"]
    rc, utf8, err = run_cli(argv)
    assert rc == 0 and not err
    assert any(ord(ch) > 0xFFFF for ch in utf8)  # something latin-1 cannot write, outside the BMP
    rc, latin1, err = run_cli(argv, stdout_encoding="latin-1")
    assert problem(rc, latin1, err, True) is None and rc == 0, err
    assert json.loads(latin1) == json.loads(utf8)


# ---------------------------------------------------------------- real processes

def lab_process(*args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """`python -m lab ...` in a real process (arguments may be bytes, as a shell passes them), offline."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "OMP_NUM_THREADS": "1"}
    env.pop("TRANSFORMERS_VERBOSITY", None)  # as a reader's shell has it: lab must quiet transformers itself
    return subprocess.run([sys.executable, "-m", "lab", *args], input=stdin, capture_output=True, cwd=ROOT, env=env,
                          timeout=180)


def process_problem(p: subprocess.CompletedProcess, as_json: bool) -> str | None:
    """problem() for a real process; its stdout and stderr must be valid UTF-8 too."""
    try:
        out, err = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"output is not UTF-8: {e}"
    return problem(p.returncode, out, err, as_json)


def test_real_process_argv_from_raw_bytes(tiny_model_dirs):
    """Bytes that are not UTF-8 in argv (a Latin-1 terminal, a surrogate encoded): one line, no traceback,
    and before torch is even imported."""
    g = str(tiny_model_dirs["gpt2"])
    for args in (["next", "--json", "--model", g, "--prompt", b"antes \xed\xa0\x80 depois"],
                 ["analogy", "--json", "--model", g, "rei", "homem", b"mulher \xe9"]):
        p = lab_process(*args)
        assert process_problem(p, True) is None and p.returncode == 2, p.stderr
        assert b"not valid UTF-8 text" in p.stderr


def test_real_process_files(tmp_path):
    """Invalid UTF-8, NUL bytes, an empty file and 200,000 characters, from a file and from stdin."""
    files = {"invalid": b"caf\xe9 au lait", "nul": b"antes\x00depois\x00", "empty": b"",
             "long": LONG.encode()}
    for name, data in files.items():
        path = tmp_path / f"{name}.txt"
        path.write_bytes(data)
        p = lab_process("tokens", "--json", str(path))
        assert process_problem(p, True) is None, (name, p.stderr)
        if name == "invalid":
            assert p.returncode == 2 and b"not UTF-8 text" in p.stderr and b"(byte 3)" in p.stderr
        else:
            assert p.returncode == 0 and json.loads(p.stdout)["encodings"]["gpt2"]["chars"] == len(data.decode())
    p = lab_process("tokens", "--json", "-", stdin=files["invalid"])
    assert process_problem(p, True) is None and p.returncode == 2, p.stderr


def test_real_process_long_text_is_one_line_no_library_warning(tiny_model_dirs, tmp_path):
    """200,000 characters on a 64-token model: transformers warns "Token indices sequence length is longer
    than..." unless quieted; stderr must hold our one line only."""
    path = tmp_path / "long.txt"
    path.write_text(LONG, encoding="utf-8")
    p = lab_process("lens", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--file", str(path))
    assert process_problem(p, True) is None and p.returncode == 2, p.stderr
    assert b"takes at most 64" in p.stderr


def test_real_process_prints_a_folder_name_that_is_not_utf8(tiny_model_dirs, tmp_path):
    """The lone surrogate that reaches a real stdout: prefetch names the cache folder it found the model in."""
    from tests.test_models import fake_hub_cache

    home = os.path.join(os.fsencode(tmp_path), b"hf" + NOT_UTF8)
    fake_hub_cache(Path(os.fsdecode(home)) / "hub", "FacebookAI/roberta-base", tiny_model_dirs["roberta"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_HUB_CACHE")}
    p = subprocess.run([sys.executable, "-m", "lab", "prefetch", "roberta-base"], capture_output=True, cwd=ROOT,
                       env={**env, "HF_HUB_OFFLINE": "1", "HF_HOME": os.fsdecode(home)}, timeout=120)
    assert process_problem(p, False) is None and p.returncode == 0, p.stderr
    assert b"hf-\\udce9" in p.stdout
