"""Every page in both languages: no English left in the Portuguese UI, numbers written the Brazilian way.

Each page is opened with AppTest in English and in Portuguese (the model pages on tiny random models
standing in for the course models), and every visible string is collected: titles, labels, help,
captions, Markdown, alerts, widget options as formatted, metrics, table headers and cells, the title
attribute and text of HTML views, and inside each Vega-Lite spec the titles, legend/facet entries,
text marks and tooltips. Both runs get the same inputs, so they show the same numbers.

In Portuguese a string fails when
- it holds a whole word from ENGLISH (English words that are not Portuguese), after removing
  ALLOWED terms (technical terms and names the course keeps in English) and what is not UI wording:
  the reader's own text, the texts the page measures, tokens (a model's vocabulary entries);
- it holds a number written the English way: a decimal point not followed by exactly three digits
  (2.20, 0.5, 1.5B), 0.123, .07, comma thousands (1,050,000); and, because 1,024 and 1.234 also read
  as Brazilian numbers, any number with a separator that the English run of the same page shows
  verbatim (the same number unconverted);
- a float column of a table is left to Streamlit, which always writes a decimal point;
- a chart has no Brazilian number locale (config.locale: decimal ",", thousands ".") for the numbers
  Vega writes itself (axes, legends, tooltips, text marks with a format).
In English a string fails when it holds a word from PORTUGUESE.

Besides each page's first view: the sampling page's second comparison, the loader's errors (a hub model
not downloaded, one over the memory budget), the notices for an encoder where a decoder is needed, and
each page's own problems (a word of several tokens, a prompt too long, empty texts, an own text
longer than the perplexity page measures); and each loader
error raised by the real code, in both languages (English: exactly the CLI's line).

Not checked here: a float slider (temperature, top-p) is drawn by Streamlit with a printf format, which has
no decimal comma; a script writes the comma on the Portuguese UI, checked in Chromium
(tests/test_browser_projector.py).
Failures are grouped by language, page and element: how many strings, and the first two of them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from html.parser import HTMLParser

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from lab import embeddings, fossils, lens, perplexity, sampling, tokens
from lab.causal import TROPHY
from lab.models import registry
from lab.pages import by_slug
from tests.pages import matrix, open_page, script
from ui.streamlit_internals import convert_arrow_bytes_to_pandas_df

PAGES = matrix("translations")  # every page of the manifest (tests/pages.py)
# The same inputs in both languages (the pages' Portuguese defaults), so both runs show the same numbers.
INPUTS = {"attn_text": TROPHY["pt"][0], "mask_text": TROPHY["pt"][0], "lens_text": lens.DEFAULT_TEXT["pt"],
          "samp_prompt": sampling.PROMPTS["pt"], "trophy_pair": "pt", "trophy_a": TROPHY["pt"][0],
          "trophy_b": TROPHY["pt"][1], "trophy_word": TROPHY["pt"][2],
          "ppl_models": ["course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2", "course-roberta"]}

# English words that are not Portuguese words (so "a", "as", "do", "no", "se", "for", "compare" are out).
ENGLISH = set("""
the and of with is are was were be been being this that these those which who whom whose what when where why
how from into onto than then there here each every more most less least only also not but or if it its they
them their you your we our has have had does doesn don didn can cannot could would should will must may per by
at on in to an one two three four five six first last next previous after before above below between both same
other another some any all none yes off new old show showing shown hide type choose pick click hover stop
stopped load loading loaded download downloading downloaded unavailable available instead missing server
budget memory needs need about fit fits large small big too model models layer layers head heads word words
text texts sentence sentences weight weights rank probability probabilities entropy cumulative raw kept
removed sampled drawn stage stages role result results expected series source sources data note parameters
predicted seed seeds settings setting generation generating temperature greedy mask causal attention lens
perplexity sampling tokenization tokenizer encoding encodings premium sample pairs pair passage characters
character chapter chapters page pages home explorer taken apart costs cost analogy analogies neighbours
neighbour nearest closest answer answers best difference itself self heatmap window context position
positions input inputs output outputs guess target following followed settled appears left right run runs
because without within while still just like very much many few used using uses use keep keeps shows see
look looking looked your yours such own already again always never often little dimensions dimension split
sum sums row rows column columns cell cells colour color colours bar bars line lines chart charts axis grid
figures published paper table guide raw why each floor floors words hold holds about reads read stride
pieces piece word exact exactly zero zeros scale scales size sizes buys parameters non baseline unigram
lower higher better worse surprised surprise comparable pseudo documentation your own evaluated evaluating
share shared things thing fast slow image images caption error errors failed cannot reach reached reachable
hub cached cache local machine connected prefetch while set env variable variables directory folder file
files checkout repository repo weights unknown known registry name names size needs models fit beside besides
along across through around against during upon toward towards whose until since though although even ever
however therefore thus so up down out get gets got make makes made take takes give gives gave let lets put say
says said tell find finds found open opens close try want know think way time times part parts number numbers
list mean average yet now today something nothing everything anything someone everyone please sorry done
ready wait waiting minutes seconds hours language languages select selected sort sorted sorting teacher class
classroom students reader readers presentation mode export hosted limit limits cut warning notice ignored
default defaults garbage step steps filter filters candidate candidates likely unlikely certain pale deep blue
orange red green grey gray darker light trophy suitcase
""".split()) - {"causal", "zero", "zeros", "local", "use", "pseudo", "cache", "hub", "prefetch"}  # pt too
# Terms and names the Portuguese UI keeps in English (removed before looking for English words).
ALLOWED = [
    r"GPT-[124]o?(?: (?:small|medium|large|XL))?", r"DistilGPT-2", r"RoBERTa(?: base)?", r"Petrov et al\.?",
    r"Radford et al\.?", r"et al\.?", r"Hugging Face", r"WikiText-2", r"FLORES-200", r"Debian", r"UTF-8", r"PCA",
    r"PC[12]", r"3Cos(?:Add|Mul)", r"transformers", r"generate", r"tuned lens", r"zero-shot", r"Language / Idioma",
    r"q·k/√d", r"top-[kp]", r"scores?", r"query", r"queries", r"keys?", r"values?", r"softmax",
    r"logits?", r"argmax", r"tokens?", r"embeddings?", r"unembedding", r"stride", r"bits?", r"bytes?", r"nats",
    r"offline", r"online", r"encoders?", r"decoders?", r"prompt", r"link", r"app", r"lab", r"CLI", r"gpt2",
    r"cl100k_base", r"o200k_base", r"r50k_base", r"p50k_base",
    r"Fast-DetectGPT", r"\*Release Strategies and the Social Impacts of Language Models\*",  # the detector's sources
    r"\*GPT detectors are biased against non-native English writers\*",
    r"\*Exposure Bias versus Self-Recovery\*", r"\*The Illusion of Diminishing Returns\*",  # the ceiling's sources
    r"[a-z][a-z0-9]*(?:[._][a-z0-9]+)+",  # code names: attn.weights, default_hparams, model.py
    r"<mask>", r"\[MASK\]", r"BERT-(?:base|large)",  # the mask token as typed; model names
    r"server-sent events", r"Text Generation Inference",  # a protocol's and a product's names
]
# Names with numbers in them, and file paths: neither words nor numbers the UI writes.
NAMED = re.compile(r"SQuAD \d\.\d|§\d+(?:\.\d+)?|arXiv:\d+\.\d+|(?<![\w/])[\w.-]+(?:/[\w.-]+)+\.\w+")
# Portuguese words that are not English, for the English run.
PORTUGUESE = set("""
não é está estão são você uma umas para com que dos das pelo pela pelos pelas mais menos também então até
cada sobre entre sem já ou modelo modelos camada camadas cabeça cabeças palavra palavras texto frase
""".split())
# Options that name things in their own words: the presets' example words, languages by their own names.
DATA_WORDS = {"an_preset": frozenset(w for p in embeddings.PRESETS.values() for w in p[:4]),
              "ui_lang": frozenset({"English"}), "trophy_pair": frozenset({"English"})}
NUMBER = re.compile(r"(?<![\w.,])(?:\d[\d.,]*\d|\d|\.\d+)(?!\d)")
MARKS = str.maketrans({"␣": " ", "↵": "\n", "⇥": "\t"})


@functools.cache
def vocabulary() -> frozenset[str]:
    """Every entry of GPT-2's vocabulary as text (the tiny models' tokens), stripped."""
    from lab.encodings import hf_gpt2_tokenizer

    tok = hf_gpt2_tokenizer()
    return frozenset(tok.decode([i]).strip() for i in range(len(tok)))


@functools.cache
def content_texts() -> tuple[str, ...]:
    """Texts the pages measure or echo: the passages, the unseen texts, the sample pairs, the inputs."""
    texts = [p["text"] for p in perplexity.passages()] + list(perplexity.unseen_texts().values())
    texts += [p[k] for p in tokens.sample_pairs() for k in ("pt", "en")] + list(tokens.course_passage().values())
    texts += [v for v in INPUTS.values() if isinstance(v, str)] + list(sampling.PROMPTS.values())
    texts += [s for pair in TROPHY.values() for s in pair]
    from lab.cli.guide import commands  # the lab guide quotes each command's --help, in English by design (its caption)

    texts += [c["help"] for c in commands()]
    return tuple(texts)


def is_data(s: str) -> bool:
    """A token, a piece of a text the page measures, or the reader's text: not UI wording."""
    plain = re.sub(r"^\d+\.? ", "", s.translate(MARKS)).rstrip("…").strip()
    if not plain or re.fullmatch(r"[\s\d.,−+\-%]+", plain):
        return not plain  # numbers are never data: they must be written the reader's way
    if plain in vocabulary() or (s.endswith("…") and any(v.startswith(plain) for v in vocabulary())):
        return True
    return len(plain) >= 3 and any(plain in text for text in content_texts())


def without_data(s: str, data_words: frozenset[str] = frozenset(), data: bool = False) -> str:
    """s without what is not UI wording: the reader's texts, quoted or marked tokens, code, names; where
    the string may be data (a table cell), also tokens joined by " · " (a word's pieces)."""
    for text in sorted(content_texts(), key=len, reverse=True):
        if len(text) >= 12:
            s = s.replace(text, " ")
    s = re.sub(r"`[^`]*`", " ", s)  # code: commands, environment variables
    s = NAMED.sub(" ", s)
    s = re.sub(r"https?://\S+", " ", s)
    s = re.sub(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", " ", s)  # HF_HUB_OFFLINE
    s = re.sub(r"(['\"])(.*?)\1", lambda m: " " if is_data(m.group(2)) else m.group(0), s)
    joins = r" {2,}| \| | · " if data else r" {2,}| \| "  # "tok   0,123", "an | ti", "g · an · h"
    s = "  ".join(" " if is_data(c) else c for c in re.split(joins, s))
    s = " ".join(" " if ("␣" in c or "↵" in c or "⇥" in c) and is_data(c) else c for c in s.split(" "))
    names = [*registry.REGISTRY, *(i.hub_id for i in registry.REGISTRY.values() if i.hub_id)]
    names += list(fossils.BY_NAME)  # the fossils page's models (roberta-large is named, never loaded)
    for name in sorted(names, key=len, reverse=True):
        s = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", s)
    for word in data_words:
        s = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", " ", s)
    return s


def english_words(s: str) -> list[str]:
    """The words of s (UI wording only) that are English and not Portuguese."""
    for pattern in sorted(ALLOWED, key=len, reverse=True):
        s = re.sub(rf"(?<![\w-]){pattern}(?![\w-])", " ", s, flags=re.IGNORECASE)
    return [w for w in re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)*", s) if w.lower() in ENGLISH]


def portuguese_words(s: str) -> list[str]:
    """The words of s that are Portuguese and not English."""
    s = re.sub(r"Português \(Brasil\)", " ", s)
    return [w for w in re.findall(r"[^\W\d_]+", s) if w.lower() in PORTUGUESE]


def english_numbers(s: str, seen_in_english: set[str]) -> list[str]:
    """Numbers in s written the English way (see the module docstring)."""
    bad = []
    for n in NUMBER.findall(s):
        point = re.search(r"\d\.(\d+)", n)
        english_style = bool(n.startswith(".") or (point and len(point.group(1)) != 3) or re.match(r"0\.\d", n)
                             or re.search(r"\d,\d{3},\d{3}", n))
        unconverted = ("." in n or "," in n) and n in seen_in_english
        if english_style or unconverted:
            bad.append(n)
    return bad


@dataclasses.dataclass
class Shown:
    """One visible string: where it is, whether it may be data (tokens, the reader's text), the text."""

    where: str
    text: str
    data: bool = False  # table cells, options, text marks, metric values: tokens and user text skipped
    data_words: frozenset[str] = frozenset()


class _Html(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.titles, self.texts, self.skip = [], [], 0

    def handle_starttag(self, tag, attrs):  # style, script and source code (<pre>) are not UI wording
        self.titles += [v for k, v in attrs if k == "title" and v]
        self.skip += tag in ("style", "script", "pre")

    def handle_endtag(self, tag):
        self.skip -= tag in ("style", "script", "pre") and self.skip > 0

    def handle_data(self, data):
        if data.strip() and not self.skip:
            self.texts.append(data)


def html_strings(where: str, body: str) -> list[Shown]:
    """An HTML view's title attributes and text nodes (each node alone: a token, a piece of text)."""
    parser = _Html()
    parser.feed(body)
    shown = [s for s in parser.texts if not any(s.strip() in text for text in content_texts())]  # the text itself
    return ([Shown(f"{where} title", s, data=True) for s in parser.titles]
            + [Shown(f"{where} text", s, data=True) for s in shown])


def markdown_text(body: str) -> str:
    """Markdown as a reader sees it (emphasis marks and link targets dropped)."""
    return re.sub(r"\]\([^)]*\)", "]", body).replace("**", "").replace("__", "")


def frame_strings(where: str, frame, lang: str, config: dict | None = None) -> list[Shown]:
    """A table's headers (as column_config labels them), index labels and string cells; a float column
    left to Streamlit fails in pt."""
    config = config or {}
    out = [Shown(f"{where} header", (config.get(str(c)) or {}).get("label") or str(c)) for c in frame.columns]
    if not all(isinstance(i, int) for i in frame.index):
        out += [Shown(f"{where} row", str(i)) for i in frame.index]
    for c in frame.columns:
        col = frame[c]
        if col.dtype.kind == "f" and lang == "pt" and not (col.dropna() % 1 == 0).all():
            out.append(Shown(f"{where} column {c!r}", f"{col.dropna().iloc[0]!r} (a float column: Streamlit "
                                                     "writes 0.5, never 0,5)"))
        elif col.dtype.kind not in "biufcmM":  # text (object or pandas' string dtype)
            out += [Shown(f"{where} cell", v, data=True) for v in col if isinstance(v, str)]
    return out


UI_CHANNELS = ("color", "fill", "stroke", "column", "row", "facet", "xOffset", "yOffset", "shape", "strokeDash")
DATA_CHANNELS = ("x", "y", "text", "tooltip")


def _encodings(node):
    """Every encoding block of a Vega-Lite spec, however deep (layers, facets, concatenations)."""
    if isinstance(node, dict):
        if isinstance(node.get("encoding"), dict):
            yield node["encoding"]
        for v in node.values():
            yield from _encodings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _encodings(v)


def _titles(node, path=""):
    """(path, text) for every title and subtitle in a spec, and the string literals of label expressions."""
    if isinstance(node, dict):
        for k, v in node.items():
            here = f"{path}.{k}"
            if k in ("title", "subtitle", "text") and path.endswith(".title") or k in ("title", "subtitle"):
                if isinstance(v, str) or isinstance(v, list):
                    yield from ((here, x) for x in ([v] if isinstance(v, str) else v) if isinstance(x, str))
                elif isinstance(v, dict):
                    yield from _titles(v, here)
            elif k == "labelExpr" and isinstance(v, str):
                literals = re.sub(r"\[.*\](?=\[datum)", "", v)  # an array of token labels is data
                yield from ((here, json.loads(m)) for m in re.findall(r'"(?:[^"\\]|\\.)*"', literals))
            else:
                yield from _titles(v, here)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _titles(v, f"{path}[{i}]")


def chart_strings(where: str, proto, lang: str) -> list[Shown]:
    """A Vega-Lite chart's titles, legend and facet entries, text marks, tooltips; its number locale."""
    spec = json.loads(proto.spec)
    frames = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in proto.datasets]
    name = next((s for _, s in _titles(spec) if s), "")
    where = f"{where} {name!r}"
    out = [Shown(f"{where} {path}", s) for path, s in _titles(spec) if s]
    fields = {}
    for enc in _encodings(spec):
        for channel, value in enc.items():
            for e in value if isinstance(value, list) else [value]:
                if channel in UI_CHANNELS + DATA_CHANNELS and isinstance(e, dict) and isinstance(e.get("field"), str):
                    fields[e["field"]] = fields.get(e["field"], False) or channel in UI_CHANNELS
    for field, ui in fields.items():
        for frame in frames:
            if field in frame.columns:
                out += [Shown(f"{where} field {field!r}", v, data=not ui) for v in frame[field].unique()
                        if isinstance(v, str)]
    if lang == "pt":
        number = spec.get("config", {}).get("locale", {}).get("number", {})
        if number.get("decimal") != "," or number.get("thousands") != ".":
            out.append(Shown(f"{where} config.locale", f"{number or 'no locale'} (Vega writes 2.20 and 1,024)"))
    return out


def strings(at: AppTest, page: str, lang: str) -> list[Shown]:
    """Every visible string of the app as it stands (main area and sidebar)."""
    out = []
    for node in at._tree:
        kind = getattr(node, "type", "")
        key = getattr(node, "key", None)
        where = f"{page}: {kind}" + (f"(key={key})" if key else "")
        proto = getattr(node, "proto", None)
        if kind in ("expander", "status", "tab") and proto is not None:
            out.append(Shown(f"{where}.label", proto.label))
            continue
        if proto is None or not hasattr(proto, "DESCRIPTOR"):
            continue
        if kind == "exception":
            out.append(Shown(where, f"EXCEPTION {proto.message}"))
            continue
        if kind == "vega_lite_chart":
            out += chart_strings(where, proto, lang)
            continue
        if kind in ("dataframe", "table"):
            config = json.loads(getattr(proto, "columns", "") or "{}")
            out += frame_strings(where, node.value, lang, config)
            for column in config.values():
                out += [Shown(f"{where} column help", column["help"])] if (column or {}).get("help") else []
            continue
        d = MessageToDict(proto, preserving_proto_field_name=True)
        if kind == "html" or (kind == "markdown" and d.get("allow_html")):
            out += html_strings(where, d.get("body", ""))
            continue
        data_words = DATA_WORDS.get(key, frozenset())
        for field in ("label", "help", "placeholder", "caption"):
            if isinstance(d.get(field), str) and d[field]:
                out.append(Shown(f"{where}.{field}", markdown_text(d[field])))
        if isinstance(d.get("body"), str):
            data = kind in ("metric", "text")
            out.append(Shown(f"{where}.body", markdown_text(d["body"]), data=data))
        if isinstance(d.get("delta"), str):
            out.append(Shown(f"{where}.delta", d["delta"], data=True))
        for option in d.get("options", []):
            text = option if isinstance(option, str) else option.get("content", "")
            out.append(Shown(f"{where}.option", text, data=True, data_words=data_words))
        for img in d.get("imgs", []):
            if img.get("caption"):
                out.append(Shown(f"{where}.caption", img["caption"]))
    return out


def visit(page: str, lang: str, state: dict | None = None, **params) -> list[Shown]:
    """Open `page` in `lang` (from a link, as a shared one opens) and collect its strings, with the
    page's other views: the second comparison of sampling and a second text on the tokens page."""
    at = open_page(None if by_slug(page).default else script(page), timeout=180, check=False,
                   state={**INPUTS, **(state or {})}, lang=lang, **params)
    shown = strings(at, page, lang)
    if page == "sampling" and any(r.key == "samp_compare" for r in at.radio):
        at.radio(key="samp_compare").set_value("seeds").run()
        shown += strings(at, page, lang)
    return shown


def problems(shown: list[Shown], lang: str, seen_in_english: set[str]) -> list[tuple[str, str, str]]:
    """(where, what is wrong, the string) for each string that is not in `lang`."""
    found = []
    for s in shown:
        if s.text.startswith("EXCEPTION") or "a float column" in s.text or "config.locale" in s.where:
            found.append((f"[{lang}] {s.where}", "", s.text))
            continue
        if s.data and is_data(s.text):
            continue
        text = without_data(s.text, s.data_words, s.data)
        if lang == "pt":
            words, numbers = english_words(text), english_numbers(text, seen_in_english)
            if words:
                found.append((f"[pt] {s.where}", f"English {sorted(set(words))}", s.text))
            if numbers:
                found.append((f"[pt] {s.where}", "numbers written the English way", s.text))
        elif words := portuguese_words(text):
            found.append((f"[en] {s.where}", f"Portuguese {sorted(set(words))}", s.text))
    return found


def report(found: list[tuple[str, str, str]]) -> str:
    """The problems grouped by element and kind: how many strings, and the first two of them."""
    groups: dict[tuple[str, str], list[str]] = {}
    for where, why, text in found:
        groups.setdefault((where, why.split(" [")[0]), []).append(f"{why}: {text!r}" if why else text)
    lines = [f"{where}: {len(texts)}× " + " | ".join(dict.fromkeys(texts[:2]))[:400]
             for (where, _), texts in groups.items()]
    return f"{len(found)} strings not in the page's language, {len(lines)} places:\n" + "\n".join(lines)


def numbers_in(shown: list[Shown]) -> set[str]:
    """Numbers with a separator in the English run's strings."""
    return {n for s in shown for n in NUMBER.findall(s.text) if "." in n or "," in n}


@pytest.mark.parametrize("page", PAGES)
def test_every_page_in_both_languages(course_standins, page):
    english = visit(page, "en")
    portuguese = visit(page, "pt")
    found = problems(english, "en", set()) + problems(portuguese, "pt", numbers_in(english))
    assert len(portuguese) > 5 and len(english) > 5
    assert not found, report(found)


# The model loader's errors and notices in Portuguese: a hub model this machine does not have
# (offline), one over the memory budget, and the pages' notices for an encoder where they need a decoder.
ERROR_VIEWS = [
    ("attention", {}, {"model": "gpt2"}),
    ("attention", {}, {"model": "gpt2-xl"}),
    ("causal_mask", {}, {"model": "course-roberta"}),
    ("logit_lens", {}, {"model": "course-roberta"}),
    ("sampling", {}, {"model": "course-roberta"}),
    ("perplexity", {"ppl_models": ["course-gpt2", "gpt2", "gpt2-xl"]}, {}),
    # the pages' own problems: a word of several tokens, a prompt longer than the context, empty texts
    ("analogies", {"an_a": "file", "an_b": "arquivo", "an_c": "pacote", "an_expected": "package"}, {}),
    ("logit_lens", {"lens_word": "anticonstitucionalmente"}, {}),
    ("sampling", {"samp_prompt": "palavra " * 40}, {}),
    ("causal_mask", {"trophy_word": "mesa"}, {}),
    ("tokens", {"tokens_pt": ""}, {}),
    ("attention", {"attn_text": " "}, {}),
    ("perplexity", {"ppl_source": "own", "ppl_text": "Uma frase do leitor, " * 300,  # cut at 6,000 characters
                    "ppl_models": ["course-gpt2-1x64"]}, {}),
]


@pytest.mark.parametrize(("page", "state", "params"), ERROR_VIEWS)
def test_errors_and_notices_in_both_languages(course_standins, monkeypatch, page, state, params):
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", "1000")  # the course models fit; gpt2-xl does not
    english = visit(page, "en", state, **params)
    portuguese = visit(page, "pt", state, **params)
    alerts = [s for s in portuguese if ": error" in s.where or ": warning" in s.where or ": info" in s.where]
    assert alerts, "the view shows no message"
    found = problems(english, "en", set()) + problems(portuguese, "pt", numbers_in(english))
    assert not found, report(found)


def loader_errors(tmp_path, monkeypatch) -> list[Exception]:
    """One of each error the model loader can show, raised by the real code paths (no network)."""
    from lab import models
    from lab.models import hub
    from lab.models.budget import ModelCache

    errors = []

    def catch(call, *args):
        try:
            call(*args)
        except ValueError as e:
            errors.append(e)

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    catch(hub.check_online, "gpt2-large")  # offline
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hub, "hub_reachable", lambda timeout=0: False)
    catch(hub.check_online, "gpt2-large")  # the hub does not answer
    catch(ModelCache(budget=500 * registry.MB, load=lambda k: None, estimate=models.estimate_bytes).check_fits,
          "gpt2-xl")
    catch(models.load, str(tmp_path / "nowhere"))  # unknown
    (tmp_path / "empty").mkdir()
    catch(models.load, str(tmp_path / "empty"))  # not a model directory
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    catch(models.load, str(tmp_path / "broken"))  # the library cannot read it
    (tmp_path / "broken" / "model.safetensors").write_bytes(b"\x05\x00")
    catch(models.estimate_bytes, str(tmp_path / "broken"))
    missing = dataclasses.replace(registry.info("course-gpt2"), path=str(tmp_path / "gone"))
    monkeypatch.setitem(registry.REGISTRY, "course-gpt2", missing)
    catch(hub.download, "course-gpt2")
    errors.append(hub._no_space("gpt2-large", "openai-community/gpt2-large", 3 * 10**9, during=False))
    return errors


def test_loader_errors_have_reasons_and_read_in_portuguese(tmp_path, monkeypatch):
    from ui import messages

    errors = loader_errors(tmp_path, monkeypatch)
    reasons = [e.reason for e in errors]
    assert reasons == ["offline", "hub_silent", "too_large", "unknown", "not_a_model", "load_failed",
                       "unreadable_weights", "missing_shipped", "no_space"]
    from ui import i18n

    monkeypatch.setattr(i18n, "lang", lambda: "en")
    assert [messages.text(e) for e in errors] == [str(e) for e in errors]  # the CLI's own line
    monkeypatch.setattr(i18n, "lang", lambda: "pt")
    found = []
    for e in errors:
        text = messages.text(e)
        wording = text
        values = sorted((v for v in e.details.values() if isinstance(v, str)), key=len, reverse=True)
        for value in values:  # names, paths, commands and the library's own words stay as they are
            wording = wording.replace(value, " ")
        words, numbers = english_words(without_data(wording)), english_numbers(wording, set())
        if words or numbers or text == str(e):
            found.append(f"[pt] loader {e.reason}: English {words}, numbers {numbers}: {text!r}")
    assert not found, "\n".join(found)
    too_large = messages.text(errors[2])
    assert "6,92 GB" in too_large and "500 MB" in too_large and "LAB_MEMORY_BUDGET_MB" in too_large


@pytest.mark.parametrize(("accept", "code"), [
    ("pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7", "pt"), ("en-US,en;q=0.9,pt-BR;q=0.8", "en"), ("pt-BR", "pt"),
    ("fr-FR,fr;q=0.9,pt;q=0.8,en;q=0.5", "pt"), ("de-DE,de;q=0.9", "en"), ("", "en"), (None, "en"),
    ("en;q=0.2,pt;q=0.8", "pt"), ("pt;q=0,en;q=0.1", "en"), ("pt;q=abc,en", "en"), ("PT-br", "pt"),
])
def test_a_link_without_a_language_follows_the_browsers_preference(accept, code):
    from ui.i18n import preferred

    assert preferred(accept) == code
