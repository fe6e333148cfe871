"""lab.course.scale (the offline scale curve's figures) against an independent computation: each language's numbers
from one plain transformers forward pass, and the two languages pooled token by token.

The pooled perplexity is exp(total NLL / total tokens) over English and Portuguese together: the perplexity of the
two texts read as one corpus. A mean of the two perplexities, or of the two per-token losses, weighs a short text
as much as a long one; the texts here differ in length and in difficulty so that each of those gives another number.
"""

import json
import math
import re
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, GPT2LMHeadModel

from lab import perplexity
from lab.course import scale

ROOT = Path(__file__).resolve().parents[1]
MODEL = "course-gpt2-1x64"
TEXTS = {  # both fit one 256-token context, so one forward pass scores every token but the first
    # 34 tokens at perplexity ~125 and 57 at ~24: pooled ~44, the mean of the perplexities ~75, of the losses ~54
    "en": ("The Debian system is a free operating system. Its packages are built by volunteers, and each stable "
           "release is tested for months before it ships to users."),
    "pt": ("O Debian é um sistema operacional livre, mantido por voluntários do mundo inteiro. Ele traz milhares de "
           "pacotes prontos para instalar."),
}


def oracle(text: str) -> dict:
    """One language's figures from transformers directly: float32, the whole text in one forward pass."""
    path = ROOT / "models" / MODEL
    tok = AutoTokenizer.from_pretrained(path)
    model = GPT2LMHeadModel.from_pretrained(path, dtype=torch.float32).eval()
    ids = tok(text)["input_ids"]
    assert len(ids) <= model.config.n_positions
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
    nll = float(-logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].sum())
    data = json.loads((ROOT / "lab" / "data" / "course_unigram_counts.json").read_text(encoding="utf-8"))
    counts, n = data["counts"], data["total"]
    unigram = -sum(math.log((counts[i] + 1) / (n + len(counts))) for i in ids[1:])
    tokens = len(ids) - 1
    return {"tokens": tokens, "nll": nll, "ppl": math.exp(nll / tokens),
            "bits_per_byte": nll / math.log(2) / len(text.encode("utf-8")),
            "ppl_per_word": math.exp(nll / len(re.findall(r"\S+", text))), "unigram_ppl": math.exp(unigram / tokens),
            "params": sum(p.numel() for p in model.parameters()),
            "embeddings": model.transformer.wte.weight.numel() + model.transformer.wpe.weight.numel()}


@pytest.fixture(scope="module")
def figures():
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setattr(perplexity, "unseen_texts", lambda: dict(TEXTS))
    try:
        yield scale.figures((MODEL,))[MODEL]
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def expected():
    return {lang: oracle(text) for lang, text in TEXTS.items()}


@pytest.mark.parametrize("lang", list(TEXTS))
def test_each_language_matches_a_plain_forward_pass(figures, expected, lang):
    mine, ref = figures[lang], expected[lang]
    assert set(mine) == {"tokens", "nll", "ppl", "bits_per_byte", "ppl_per_word", "unigram_ppl"}
    assert mine["tokens"] == ref["tokens"]
    for key in ("nll", "ppl", "bits_per_byte", "ppl_per_word"):
        assert mine[key] == pytest.approx(ref[key], rel=1e-5), key
    assert mine["unigram_ppl"] == pytest.approx(ref["unigram_ppl"], rel=1e-9)


def test_the_two_languages_pool_token_by_token(figures, expected):
    en, pt = expected["en"], expected["pt"]
    pooled = math.exp((en["nll"] + pt["nll"]) / (en["tokens"] + pt["tokens"]))
    assert figures["all_ppl"] == pytest.approx(pooled, rel=1e-5)
    wrong = {"mean of the perplexities": (en["ppl"] + pt["ppl"]) / 2,
             "mean of the losses": math.exp((en["nll"] / en["tokens"] + pt["nll"] / pt["tokens"]) / 2),
             "English only": en["ppl"], "Portuguese only": pt["ppl"]}
    for name, value in wrong.items():  # the texts tell a wrong pooling apart
        assert abs(value / pooled - 1) > 0.05, name
    assert min(en["ppl"], pt["ppl"]) < figures["all_ppl"] < max(en["ppl"], pt["ppl"])


def test_the_sizes_count_the_models_parameters(figures, expected):
    assert figures["params"] == expected["en"]["params"]
    assert figures["non_embedding"] == expected["en"]["params"] - expected["en"]["embeddings"]


def test_the_shipped_figures_pool_their_own_languages():
    """docs/course-models-run/scale-unseen.json, as written by `python -m lab.course.scale`: each model's
    all_ppl is its two languages' NLL over their tokens."""
    shipped = json.loads((ROOT / "docs" / "course-models-run" / "scale-unseen.json").read_text(encoding="utf-8"))
    assert set(shipped) == set(scale.MODELS)
    for name, row in shipped.items():
        pooled = math.exp((row["en"]["nll"] + row["pt"]["nll"]) / (row["en"]["tokens"] + row["pt"]["tokens"]))
        assert row["all_ppl"] == pytest.approx(pooled, rel=1e-12), name
        for lang in ("en", "pt"):
            assert row[lang]["ppl"] == pytest.approx(math.exp(row[lang]["nll"] / row[lang]["tokens"]), rel=1e-12)
