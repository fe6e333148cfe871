"""Chapter 15 on every page: the command a page shows, run in a real shell, reproduces the page's view.

Shell quoting is checked first on its own (a text with quotes, `$`, backticks, backslashes and line breaks reaches
the program exactly), then pages in AppTest (English and Portuguese, a non-default view, the shipped course
models): the command shown is run in bash and its JSON must carry the numbers the page shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab.pages import by_slug
from tests.pages import matrix, open_page, script
from ui.draw import reproduce

ROOT = Path(__file__).resolve().parents[1]
TRICKY = "It's \"quoted\" $HOME `id` $(echo x) \\n \\ back\nnew line\n\ttab; rm -rf / & echo |  ç ã 👍\n\n"
ECHO = [sys.executable, "-c", "import sys, json; print(json.dumps([sys.argv[1:], sys.stdin.read()]))"]


def bash(line: str, stdin: str = "") -> subprocess.CompletedProcess:
    """Run `line` in bash from the project's root, with the thread count the pages run with. A reader's shell
    and the app on one machine differ there (the app leaves a core: ui.model_loader.leave_a_core), and a float32
    rounding figure moves with it: the code page's largest difference from transformers is 1.1e-05 on one thread
    and 5.2e-06 on two for the same text (docs/testing.md). The count is the app's rule, not this thread's
    torch.get_num_threads(): torch keeps a count per thread, and the pages run in AppTest's script thread."""
    from ui.model_loader import app_threads

    env = {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}", "HOME": "/nonexistent-home"}
    if (threads := app_threads()) is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    return subprocess.run(["bash", "-c", line], input=stdin, capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)


@pytest.mark.parametrize("text", [TRICKY, "'", "''", "\\", "-", "--json", "", "a\x00b\\0c\x001", "%s %b \\x41"])
def test_shell_quoting_reaches_the_program_exactly(monkeypatch, text):
    monkeypatch.setattr(reproduce, "PROGRAM", ECHO)
    as_arg = bash(reproduce.shell_line(["lens", "--text", text.replace("\x00", "")]))
    assert json.loads(as_arg.stdout)[0] == ["lens", "--text", text.replace("\x00", "")]
    piped = bash(reproduce.shell_line(["tokens", "-"], stdin=text))
    assert json.loads(piped.stdout) == [["tokens", "-"], text], piped.stderr


def test_a_real_command_with_a_tricky_text():
    line = reproduce.shell_line(["lens", "--json", "--model", "course-gpt2", "--text", TRICKY])
    printed = json.loads(bash(line).stdout)
    from lab.models import load
    from lab.text import encode

    assert printed["ids"] == encode(load("course-gpt2").tokenizer, TRICKY)


def shown(at) -> str:
    """The code block of the page's "Reproduce this view" box (exactly one)."""
    [box] = [e for e in at.expander if "(chapter 15)" in e.label or "(capítulo 15)" in e.label]
    [code] = box.code
    return code.value


_RAN: dict[str, str] = {}  # a block already run in this process: its output


def run_all(script: str) -> list[dict]:
    """Run the shown block in bash; every JSON document it prints, in order. A page that shows a block another
    test ran already (the Portuguese page shows the English one's command, to the character) reuses its output:
    the same command on the same files prints the same JSON, and the page's numbers are still checked against it."""
    if script not in _RAN:
        out = bash(script)
        assert out.returncode == 0, out.stderr
        _RAN[script] = out.stdout
    return documents(_RAN[script])


def documents(stdout: str) -> list[dict]:
    """Every JSON document in a command's output, in order."""
    docs, text, decoder = [], stdout.strip(), json.JSONDecoder()
    while text:
        doc, end = decoder.raw_decode(text)
        docs.append(doc)
        text = text[end:].strip()
    return docs


def written(x, lang: str, decimals: int = 2) -> str:
    from viz.format import number

    return number(x, lang, decimals)


# --- every page's command, from the manifest --------------------------------------------------------------

PAGES = matrix("reproduce")  # every page with a command in the manifest (tests/pages.py)
# The view each page is opened on (its session state: a non-default view, a tricky text); a page not named here is
# opened as it comes. ONE_LANGUAGE: pages run in English only, and why.
STATES = {
    "tokens": {"tokens_pt": TRICKY},
    "logit_lens": {"lens_text": "O $pacote `foi` \"instalado\" com", "lens_word": "o"},
    "ceiling": {"ceil_source": "own", "ceil_text": TRICKY * 6, "ceil_n": 16,
                "ceil_models": ["course-gpt2-1x64", "course-gpt2"]},
    "sampling": {"samp_prompt": "O \"pacote\" `apt` custa $5,", "samp_seed": 5, "samp_n": 8, "samp_temperature": 0.7,
                 "samp_top_k": 20, "samp_top_p": 0.95},
    "attention": {"attn_text": "It's \"$x\" `y`\nz"},
    "perplexity": {"ppl_source": "own", "ppl_text": TRICKY * 4, "ppl_stride": 0.25,
                   "ppl_models": ["course-gpt2-1x64", "course-gpt2"]},
    "code": {"code_text": "It's \"$x\"\n`y`", "code_layer": 1, "code_head": 2},
    "analogies": {"an_k": 7, "an_method": "mul", "an_mean": True, "an_word": "-config", "an_nk": 4},
    "fill": {"fill_text": "O $pacote <mask> \"instala\" `a` <mask>.", "fill_order": "order", "fill_top": 3,
             "fill_pair": "It's \"$x\" `y`, the package."},
    "detector": {"det_source": "own", "det_text": TRICKY * 3, "det_method": "binoculars", "det_threshold": 80,
                 "det_prevalence": 30},
    "serving": {"serve_conc": [2], "serve_requests": 2, "serve_tokens": 4},
    "fossils": {"fos_models": ["openai-gpt", "gpt2", "roberta-large"]},
}
ONE_LANGUAGE = {"serving": "five real servers per run: the Portuguese page shows the same command"}
CHECKS: dict = {}  # page -> its check of the page's numbers against the command's JSON (below)


def check(page: str):
    def register(f):
        CHECKS[page] = f
        return f
    return register


def cases():
    for page in PAGES:
        for lang in ("en",) if page in ONE_LANGUAGE else ("en", "pt"):
            yield pytest.param(page, lang, id=f"{page}-{lang}",
                               marks=[pytest.mark.slow] if page == "serving" else [])


@pytest.mark.parametrize(("page", "lang"), cases())
def test_every_pages_command_prints_what_it_shows(fresh_caches, page, lang):
    """The page's "reproduce this view" block runs in bash, each command it names is one the manifest gives the
    page (the lab guide links them to it), every one prints JSON; then the page's own numbers against it."""
    at = open_page(script(page), timeout=300, lang=lang, state=STATES.get(page, {}))
    line = shown(at)
    named = re.findall(r"(?:^|[|;&\n] *)python -m lab (\S+)", line)
    assert named and set(named) <= set(by_slug(page).commands), (named, by_slug(page).commands)
    docs = run_all(line)
    assert len(docs) >= len(named)
    if page in CHECKS:
        CHECKS[page](at, line, docs, lang)


@check("tokens")
def tokens_numbers(at, line, docs, lang):
    [printed] = docs
    printed = printed["encodings"]
    table = at.table[0].value
    assert [str(v) for v in table.loc["tokens"]] == [written(printed[e]["tokens"], lang) for e in printed]
    assert printed["gpt2"]["chars"] == len(TRICKY)


@check("logit_lens")
def lens_numbers(at, line, docs, lang):
    assert "--target ' o'" in line
    [printed] = docs
    rank = [m.value for m in at.metric][2]
    assert rank == written(printed["target"]["rank"][-1], lang)


@check("ceiling")
def ceiling_numbers(at, line, docs, lang):
    table = at.dataframe[0].value
    assert [d["model"] for d in docs] == ["course-gpt2-1x64", "course-gpt2"]
    for printed, e in zip(docs, table["e"], strict=True):
        assert printed["curve"][-1]["n"] == 16
        assert e == written(printed["e"], lang, 3)


@check("sampling")
def sampling_numbers(at, line, docs, lang):
    """The sampled tokens: as many as the page's token picker offers, each labelled with the same text."""
    from viz.sampling import visible

    [printed] = docs
    labels = at.get("button_group")[0].proto.options if at.get("button_group") else None
    labels = [o.content for o in labels] if labels else [str(o) for o in at.pills(key="samp_pick").options]
    assert len(printed["tokens"]) == len(labels) == 8
    expected = [visible(r["text"]) + (f" ·{k + 1}/{r['stop'] - r['start']}" if r["stop"] - r["start"] > 1 else "")
                for r in printed["runs"] for k in range(r["stop"] - r["start"])]
    assert labels == [f"{i + 1} {e}" for i, e in enumerate(expected)]


@check("attention")
def attention_numbers(at, line, docs, lang):
    [printed] = docs
    words = {"en": ("**Split:**", "layers", "heads"), "pt": ("**Divisão:**", "camadas", "cabeças")}[lang]
    split = next(m.value for m in at.markdown if m.value.startswith(words[0]))
    assert f"{printed['n_layer']} {words[1]}, {len(printed['ids'])} tokens" in split
    assert f"= {printed['n_head']} {words[2]}" in split


@check("perplexity")
def perplexity_numbers(at, line, docs, lang):
    """Each model's perplexity per token, as the page's table writes it, from its own command (its own stride)."""
    assert "--stride 64" in line
    docs = [d["results"][0] for d in docs]
    assert [d["model"] for d in docs] == ["course-gpt2-1x64", "course-gpt2"]
    table = at.dataframe[0].value
    for row, d in zip(table.itertuples(index=False), docs, strict=True):
        assert written(d["ppl"], lang) in [str(v) for v in row], (row, d["ppl"])


@check("causal_mask")
def causal_numbers(at, line, docs, lang):
    """The trophy experiment's metrics (decoder, decoder without its mask, the encoder), one command each."""
    from viz.attention import diff_text

    metrics = [m for m in at.metric if "|" in (m.help or "")]  # the trophy's: "max |difference| ..."
    assert len(docs) == len(metrics) == 3
    assert [m.value for m in metrics] == [diff_text(d["max_abs_diff"], lang=lang) for d in docs]
    assert docs[0]["max_abs_diff"] == 0.0 and docs[2]["max_abs_diff"] > 0


@check("code")
def code_numbers(at, line, docs, lang):
    from viz.format import written as in_words

    assert "--layer 1 --head 2" in line
    [printed] = docs
    assert {s["name"].split(".")[0] for s in printed["steps"]} >= {"h1"}
    start = {"en": "Largest difference from transformers", "pt": "Maior diferença para os logits"}[lang]
    largest = next(c.value for c in at.caption if c.value.startswith(start))
    assert largest.endswith(f": {in_words(format(printed['max_abs_diff'], '.1e'), lang)}.")


@check("analogies")
def analogies_numbers(at, line, docs, lang):
    """The three metrics from the `analogy` command, the neighbours chart's tokens from `neighbours`; a word that
    starts with a dash reaches the command as a word."""
    from lab.text import visible

    assert "--method mul --mean-pieces" in line and "-- -config" in line
    analogy, near = docs
    exp = analogy["expected"]
    ranks = [exp["rank"], exp["rank_without_exclusion"]]
    assert [m.value for m in at.metric] == [visible(analogy["results"][0]["token"]),
                                            *("—" if r is None else written(r, lang, 0) for r in ranks)]
    assert len(analogy["results"]) == 7 and len(near["results"]) == 4
    tokens = sorted(visible(r["token"]) for r in near["results"])
    assert tokens in [sorted(chart_column(c, "token")) for c in at.get("vega_lite_chart")], tokens


def chart_column(chart, column: str) -> list:
    """A column of an AppTest Vega-Lite chart's datasets (empty when none has it)."""
    import pyarrow as pa

    return [v for ds in chart.proto.datasets for table in [pa.ipc.open_stream(ds.data.data).read_all()]
            if column in table.column_names for v in table.column(column).to_pylist()]


@check("fill")
def fill_numbers(at, line, docs, lang):
    """Each mask's candidates (the charts' probabilities) from `fill`, in order; every position's ranks (the table)
    from `fill --compare`."""
    assert "--top 3 --in-order" in line
    filled, compared = docs
    charts = {c.proto.spec: chart_column(c, "p") for c in at.get("vega_lite_chart")}
    for mask in filled["masks"]:
        want = sorted(round(c["p"], 6) for c in mask["candidates"])
        assert want in [sorted(round(p, 6) for p in ps) for ps in charts.values()], mask
    rank = "rank" if lang == "en" else "posição"
    [table] = [d.value for d in at.dataframe if f"{rank} E" in d.value.columns]
    for column, key in ((f"{rank} E", "encoder_rank"), (f"{rank} D", "decoder_rank")):
        assert [str(v) for v, p in zip(table[column], compared["positions"], strict=True) if p[key] is not None] == \
            [written(p[key], lang, 0) for p in compared["positions"] if p[key] is not None]


@check("detector")
def detector_numbers(at, line, docs, lang):
    """This text's scores (the table's "this text") from `detect`; TPR, FPR and the base rate at the reader's
    threshold and prevalence from `detect-eval` (the shipped rows of the course pair, as the page reads them)."""
    from lab.detect import evaluation as detect_eval

    assert line.startswith("printf '%s' ") and "--method binoculars --percentile 80 --prevalence 30" in line
    scored, evaluated = docs
    this = "this text" if lang == "en" else "este texto"
    [table] = [d.value for d in at.dataframe if this in d.value.columns]
    scores = detect_eval.flat(scored["scores"])
    assert len(table) >= 5
    assert sorted(map(str, table[this])) == sorted(written(scores[m], lang, 3) for m in scores if m in
                                                   evaluated["methods"])
    at_t = evaluated["at_threshold"]
    rates = [m.value for m in at.metric if m.value.endswith(" %")][:2]
    assert rates == [f"{written(100 * at_t['tpr'], lang, 1)} %", f"{written(100 * at_t['fpr'], lang, 1)} %"]
    share = round(100 * at_t["flagged_human_share"])
    assert any(f"**{share}**" in i.value for i in at.info), [i.value for i in at.info]


@check("serving")
def serving_numbers(at, line, docs, lang):
    """One `loadtest --json` per mode the page measures, at the reader's concurrency, requests and tokens (mixed
    lengths, as the page asks): each starts its own server where the page does, and measures the same things (the
    timings themselves differ from run to run)."""
    from lab.serving import loadtest

    assert line.count("--serve course-gpt2") == 4 and line.count("--in-process course-gpt2") == 1
    assert len(docs) == len(loadtest.MODES)
    for d in docs:
        assert (d["concurrency"], d["requests"], d["errors"]) == (2, 2, 0), d
        assert 2 <= d["tokens"] <= sum(loadtest.lengths(4)[:2]) and d["ttft_p50"] > 0 and d["tokens_per_s"] > 0


@check("fossils")
def fossils_numbers(at, line, docs, lang):
    """The three models chosen, each named once to the command; the page's metrics (the biggest model's parameters,
    how many models) from its JSON."""
    assert line.count("--model ") == 3
    [printed] = docs
    rows = printed["fossils"]
    assert [r["name"] for r in rows] == ["openai-gpt", "gpt2", "roberta-large"]
    biggest = max(rows, key=lambda r: r["params"]["total"])
    values = [m.value for m in at.metric]
    assert values[0] == written(biggest["params"]["total"], lang, 0) and biggest["name"] in at.metric[0].label
    assert values[2] == written(len(rows), lang, 0)


def test_every_page_with_a_command_has_its_view_and_no_check_is_for_a_page_that_is_gone():
    assert set(STATES) | set(CHECKS) | set(ONE_LANGUAGE) <= set(PAGES)
