"""The detector's labelled evaluation set (chapter 12): human paragraphs and the course decoders'
continuations of their openings, built reproducibly and shipped in lab/data/detect_set.json.

Human text: paragraphs of documentation no course model trained on (the Debian FAQ and the Ubuntu
Packaging Guide in English; the DebianDoc-SGML manual and the Ubuntu Packaging Guide in Brazilian
Portuguese), cleaned by the corpus's own cleaners, each checked against the course corpus's
fingerprint (lab.course.fingerprint: no paragraph or sentence of it in the corpus), 48-200 course
tokens; plus passages the project wrote itself (WRITTEN). PER_SOURCE paragraphs are drawn first from each package,
then MORE from the rest (150 English and 150 Portuguese paragraphs in all): a false-positive rate of 1 % means
something only with a few hundred human texts.
Machine text: a human text's first OPENING tokens continued by a course decoder in GENERATORS under a decoding
setting in SETTINGS (fixed seeds), for as many new tokens as the human continuation has, never stopping early:
opening + continuation replaces the human text of that length. The texts drawn first and the written ones are
continued by every generator in every setting; the ones drawn after once each, by the generator in the setting
`turn` gives them.

    python -m lab detect-set [--out lab/data/detect_set.json]   # needs apt-get and dpkg (Debian/Ubuntu)
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from lab.course import corpus, fingerprint, unseen

PATH = Path(__file__).resolve().parents[1] / "data" / "detect_set.json"
SOURCES = (unseen.SOURCES[0], unseen.SOURCES[2],  # the Debian FAQ (en), DebianDoc-SGML (pt)
    corpus.Source("ubuntu-packaging-guide-html", "en", "html", "usr/share/doc/ubuntu-packaging-guide-html/*.html",
                  "1.0.4"),
    corpus.Source("ubuntu-packaging-guide-html-pt-br", "pt", "html",
                  "usr/share/doc/ubuntu-packaging-guide-html-pt-br/*.html", "1.0.4"),
)
PER_SOURCE = 20  # human paragraphs drawn first from each package (continued in every setting by every generator)
# then drawn from the rest of each package, in SOURCES' order (each continued once): 75, 57 (all that the
# DebianDoc-SGML manual has), 75 and 93 paragraphs per package in all, 150 per language
MORE = (55, 37, 55, 73)
MIN_TOKENS, MAX_TOKENS, OPENING = 48, 200, 16
SHORT = 96  # tokens: below is "short", from here "long"
GENERATORS = ("course-gpt2", "course-gpt2-2x128")
# name: (temperature, top_k, top_p); temperature 0 is greedy
SETTINGS = {"greedy": (0.0, 0, 1.0), "temperature_0.7": (0.7, 0, 1.0), "top_k_40": (1.0, 40, 1.0),
            "top_p_0.9": (1.0, 0, 0.9), "pure": (1.0, 0, 1.0)}
SEED = 12
WRITTEN_PATH = Path(__file__).resolve().parents[1] / "data" / "detect_written.json"


def load(path: Path = PATH) -> dict:
    """The shipped set: {"note", "versions", "settings", "generators", "texts": [{"id", "label", "lang",
    "source", "tokens", "text", "pair", and for machine texts "generator", "setting", "seed"}]}."""
    return json.loads(path.read_text(encoding="utf-8"))


def balanced(texts: list[dict]) -> list[dict]:
    """For a model whose scores are not shipped (the page scores it live): the human texts continued in every
    setting by every generator (those drawn first and the written ones: 90), and one continuation of each, the
    settings and generators taken in turn (`turn`): 180 texts, every group kept. The texts drawn after (continued
    once each, by `turn` too) are for the whole set, which `detect-eval` scores."""
    per_pair = Counter(t["pair"] for t in texts if t["label"] == "machine")
    every = len(GENERATORS) * len(SETTINGS)
    human = [t for t in texts if t["label"] == "human" and per_pair[t["id"]] == every]
    out = list(human)
    for i, h in enumerate(human):
        setting, generator = turn(i)
        out += [t for t in texts if t["pair"] == h["id"] and t.get("setting") == setting
                and t.get("generator") == generator]
    return out


def turn(i: int) -> tuple[str, str]:
    """(setting, generator) of human text i's one continuation (in `balanced`, and for a text drawn after the first
    ones): setting i mod 5, generator (i div 5) mod 2."""
    settings = list(SETTINGS)
    return settings[i % len(settings)], GENERATORS[(i // len(settings)) % len(GENERATORS)]


def band(tokens: int) -> str:
    """The length group of a text: "short" under SHORT tokens, else "long"."""
    return "short" if tokens < SHORT else "long"


def _candidates(src, work: Path, tokenizer, bloom) -> list[str]:
    """A package's prose paragraphs in its language, MIN_TOKENS-MAX_TOKENS long, none of them in the corpus."""
    root, _ = corpus.fetch(src.package, src.version, work)
    out, seen = [], set()
    for path in corpus.source_files(src, root):
        for unit in corpus.file_documents(src, path):
            for p in corpus.prose(corpus.paragraphs(unit)):
                n = len(tokenizer(p, verbose=False)["input_ids"])
                if (corpus.language(p) == src.lang and MIN_TOKENS <= n <= MAX_TOKENS and p not in seen
                        and not fingerprint.in_corpus(p, bloom)):
                    seen.add(p)
                    out.append(p)
    return out


def human_texts(work: Path, tokenizer) -> tuple[list[dict], dict]:
    """PER_SOURCE paragraphs from each package (a seeded draw), the project's own passages, then MORE paragraphs
    from the rest of each package (a second seeded draw; these are marked "once": continued once)."""
    bloom, rng, texts, versions, found = fingerprint.Bloom.load(), random.Random(SEED), [], {}, {}
    for src in SOURCES:
        versions[src.package] = corpus.fetch(src.package, src.version, work)[1]
        found[src.package] = _candidates(src, work, tokenizer, bloom)
        texts += [{"lang": src.lang, "source": src.package, "text": p}
                  for p in rng.sample(found[src.package], min(PER_SOURCE, len(found[src.package])))]
    written = json.loads(WRITTEN_PATH.read_text(encoding="utf-8"))["passages"]
    texts += [{"lang": w["lang"], "source": "written-by-the-project", "text": w["text"]} for w in written]
    drawn, more = {t["text"] for t in texts}, random.Random(SEED + 1)
    for src, n in zip(SOURCES, MORE, strict=True):
        rest = [p for p in found[src.package] if p not in drawn]
        texts += [{"lang": src.lang, "source": src.package, "text": p, "once": True}
                  for p in more.sample(rest, min(n, len(rest)))]
    return texts, versions


def continuation(loaded, ids: list[int], new: int, setting: str, seed: int) -> str:
    """The opening ids continued by `new` tokens under one setting (never stopping early), as text; an
    end-of-text token the model draws is left out of the text (a person's text never shows one)."""
    from lab.sampling import steps

    temperature, top_k, top_p = SETTINGS[setting]
    drawn = [s["id"] for s in steps(loaded.model, ids, new, temperature, top_k, top_p, seed, top=1,
                                    stop_at_eos=False)]
    return loaded.tokenizer.decode(ids + drawn, skip_special_tokens=True)


def pair_texts(i: int, h: dict, models: dict) -> list[dict]:
    """Human text i (human_texts' item) as the set holds it, then its machine continuations: every generator in
    every setting, or only turn(i) for one marked "once"."""
    tokenizer = models[GENERATORS[0]].tokenizer
    ids = tokenizer(h["text"], verbose=False)["input_ids"]
    base = {"lang": h["lang"], "pair": f"h{i:03d}"}
    out = [{"id": f"h{i:03d}", "label": "human", "source": h["source"], "tokens": len(ids), "text": h["text"], **base}]
    plan = [turn(i)] if h.get("once") else [(setting, name) for name in GENERATORS for setting in SETTINGS]
    for setting, name in plan:
        g, s = GENERATORS.index(name), list(SETTINGS).index(setting)
        seed = SEED * 100_000 + i * 100 + g * 10 + s
        text = continuation(models[name], ids[:OPENING], len(ids) - OPENING, setting, seed)
        out.append({"id": f"m{i:03d}-{g}{s}", "label": "machine", "source": name, "generator": name,
                    "setting": setting, "seed": seed, "tokens": len(ids), "text": text, **base})
    return out


def build(work: Path = Path("build/corpus-work"), log=print) -> dict:
    """The whole set: each human text, then its machine continuations (pair_texts)."""
    from lab.models import load as load_model

    models = {name: load_model(name) for name in GENERATORS}
    tokenizer = models[GENERATORS[0]].tokenizer
    human, versions = human_texts(work, tokenizer)
    texts = []
    for i, h in enumerate(human):
        texts += pair_texts(i, h, models)
        log(f"{h['source']}: {i + 1}/{len(human)}")
    return {"note": "Human paragraphs from documentation no course model trained on, and the course decoders' "
                    "continuations of their first 16 tokens (lab/detect/labelled_set.py; python -m lab detect-set)",
            "versions": versions, "settings": SETTINGS, "generators": list(GENERATORS), "opening_tokens": OPENING,
            "texts": texts}
