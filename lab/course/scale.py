"""The offline scale curve's figures (perplexity page, chapter 06; docs/course-models.md).

Each course decoder on Debian text none of them saw (lab/course/unseen.py), per language and together:
perplexity per token, bits per byte, perplexity per word, and the add-one unigram baseline on the same
tokens. Writes docs/course-models-run/scale-unseen.json:

    python -m lab.course.scale docs/course-models-run/scale-unseen.json [MODEL_OR_DIR ...]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

STRIDE = 128  # half the course models' 256-token context
MODELS = ("course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2")


def figures(models=MODELS, stride: int = STRIDE) -> dict:
    """{model: {non_embedding, params, en: {...}, pt: {...}, all_ppl}} on the unseen text."""
    from lab import models as lab_models
    from lab import perplexity
    from lab.text import encode

    texts = perplexity.unseen_texts()
    out = {}
    for name in models:
        loaded = lab_models.load(name)
        row = {"non_embedding": perplexity.non_embedding_params(loaded.model),
               "params": sum(p.numel() for p in loaded.model.parameters())}
        for lang, text in texts.items():
            result = perplexity.evaluate(loaded, text, stride)
            positions = [r["position"] for r in result["surprisal"]]
            ids = encode(loaded.tokenizer, text)
            unigram = perplexity.unigram_nll(ids, positions)
            row[lang] = {k: result[k] for k in ("tokens", "nll", "ppl", "bits_per_byte", "ppl_per_word")}
            row[lang]["unigram_ppl"] = math.exp(unigram / result["tokens"]) if unigram is not None else None
        row["all_ppl"] = math.exp(sum(row[lang]["nll"] for lang in texts) / sum(row[lang]["tokens"] for lang in texts))
        out[loaded.name] = row
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/course-models-run/scale-unseen.json")
    result = figures(tuple(sys.argv[2:]) or MODELS)
    target.write_text(json.dumps(result, indent=1) + "\n")
    for name, row in result.items():
        print(f"{name:20} {row['non_embedding']:>10,} non-embedding  ppl all {row['all_ppl']:.1f}  "
              f"en {row['en']['ppl']:.1f}  pt {row['pt']['ppl']:.1f}")
