"""A fingerprint of the course corpus, small enough to ship: is this paragraph or sentence in it?

The corpus itself (about 21 MB of Debian documentation) is rebuilt by `python -m lab corpus`, never
shipped. To check, on any machine, that a text the project calls unseen is not in it (the detector's
human texts, chapter 12), `lab/data/course_corpus.bloom` holds a Bloom filter over the normalised
(lowercase, one space) paragraphs and sentences of both splits: a "no" is certain, a "yes" is wrong
with probability about FALSE_POSITIVE. `python -m lab.course.fingerprint [CORPUS_DIR]` rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from pathlib import Path

import numpy as np

PATH = Path(__file__).resolve().parents[1] / "data" / "course_corpus.bloom"
FALSE_POSITIVE = 1e-5
MIN_SENTENCE = 30  # characters: shorter sentences ("See below.") are common everywhere


def normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip().lower()


def keys(text: str) -> list[str]:
    """What is looked up for a text: each paragraph (line) and each sentence of 30 characters or more."""
    out = []
    for para in text.split("\n"):
        if not para.strip():
            continue
        out.append(normal(para))
        out += [normal(s) for s in re.split(r"(?<=[.!?:;])\s+", para) if len(s.strip()) >= MIN_SENTENCE]
    return out


def _positions(key: str, k: int, m: int) -> list[int]:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    a, b = int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:16], "little") | 1
    return [(a + i * b) % m for i in range(k)]


class Bloom:
    """m bits and k hash positions per key (double hashing over sha256)."""

    def __init__(self, bits: np.ndarray, k: int):
        self.bits, self.k, self.m = bits, k, len(bits) * 8

    @classmethod
    def sized(cls, n: int, rate: float = FALSE_POSITIVE) -> Bloom:
        m = max(8, math.ceil(-n * math.log(rate) / math.log(2) ** 2))
        return cls(np.zeros((m + 7) // 8, dtype=np.uint8), max(1, round(m / n * math.log(2))))

    def add(self, key: str) -> None:
        for p in _positions(key, self.k, self.m):
            self.bits[p >> 3] |= 1 << (p & 7)

    def __contains__(self, key: str) -> bool:
        return all(self.bits[p >> 3] >> (p & 7) & 1 for p in _positions(key, self.k, self.m))

    def save(self, path: Path) -> None:
        path.write_bytes(json.dumps({"k": self.k}).encode() + b"\n" + self.bits.tobytes())

    @classmethod
    def load(cls, path: Path = PATH) -> Bloom:
        head, _, body = path.read_bytes().partition(b"\n")
        return cls(np.frombuffer(body, dtype=np.uint8), json.loads(head)["k"])


def in_corpus(text: str, bloom: Bloom) -> list[str]:
    """The paragraphs and sentences of text that the corpus (probably) holds; [] means none of them."""
    return [k for k in keys(text) if k in bloom]


def build(corpus_dir: Path) -> Bloom:
    """The filter over both splits of a corpus built by `python -m lab corpus`."""
    found = set()
    for split in ("train", "test"):
        for line in (corpus_dir / f"{split}.jsonl").open(encoding="utf-8"):
            found.update(keys(json.loads(line)["text"]))
    bloom = Bloom.sized(len(found))
    for key in found:
        bloom.add(key)
    return bloom


if __name__ == "__main__":
    built = build(Path(sys.argv[1] if len(sys.argv) > 1 else "corpus"))
    built.save(PATH)
    print(f"{PATH}: {built.m:,} bits, k={built.k}")
