"""Benchmark: counting 1 MB of mixed English/Portuguese text in all three encodings, lab vs raw tiktoken."""

from __future__ import annotations

import random

from lab.benchmarks import entry, side_by_side
from lab.encodings import OPENAI_ENCODINGS, encoding
from lab.tokens import sample_pairs, token_costs

MB = 1_000_000
TARGET = 1.3


def mixed_text(n_bytes: int = MB, seed: int = 0) -> str:
    """At least n_bytes of UTF-8 text: the sample set's English and Portuguese lines, shuffled."""
    lines = [line for pair in sample_pairs() for line in (pair["en"], pair["pt"])]
    rng, parts, size = random.Random(seed), [], 0
    while size < n_bytes:
        rng.shuffle(lines)
        block = "\n".join(lines) + "\n"
        parts.append(block)
        size += len(block.encode("utf-8"))
    return "".join(parts)


def benchmarks() -> list[dict]:
    """One entry: lab.tokens.token_costs vs len(encode_ordinary) per encoding on the same text."""
    text = mixed_text()
    encs = [encoding(name) for name in OPENAI_ENCODINGS]  # built before timing: both sides share them

    def project():
        return token_costs(text, OPENAI_ENCODINGS)

    def reference():
        return [len(enc.encode_ordinary(text)) for enc in encs]

    if [c["tokens"] for c in project().values()] != reference():
        raise RuntimeError("lab's token counts differ from tiktoken's")
    project_s, reference_s = side_by_side(project, reference, repeats=5)
    return [entry("tokens: count 1 MB EN/PT in gpt2, cl100k_base, o200k_base", project_s, reference_s,
                  TARGET, bytes=len(text.encode("utf-8")))]
