"""The course models' tokenizer: GPT-2's BPE cut to its first N_MERGES merges.

GPT-2's ids are in merge order, so keeping the first K merges keeps ids 0..255+K exactly as in
GPT-2 (every id decodes to the same bytes); <|endoftext|> moves to 256+K. With K = 7935 the
decoder's vocabulary is 8192 (a multiple of 64), and the output layer costs 1/6 of GPT-2's.
The encoder uses the same BPE laid out as RoBERTa's: <s> <pad> </s> <unk> first (RoBERTa's
position ids assume pad = 1), then the decoder's ids shifted by ENC_OFFSET, then <mask>.
"""

from __future__ import annotations

import functools
from pathlib import Path

N_MERGES = 7935
VOCAB_SIZE = 256 + N_MERGES + 1  # 8192: the BPE tokens plus <|endoftext|>
EOT = VOCAB_SIZE - 1  # <|endoftext|>: document separator, bos and eos of the decoder
ENC_OFFSET = 4  # <s> <pad> </s> <unk> (lab.encodings.ROBERTA_SPECIALS)
ENC_VOCAB_SIZE = ENC_OFFSET + EOT + 1  # 8196: specials, the BPE tokens, <mask>
ENC_BOS, ENC_PAD, ENC_EOS, ENC_UNK = range(ENC_OFFSET)
ENC_MASK = ENC_VOCAB_SIZE - 1
CONTEXT = 256  # both models read at most 256 tokens (the encoder counting <s> and </s>)


@functools.cache
def encoding():
    """A tiktoken Encoding with GPT-2's pattern and the first N_MERGES merges (fast, for the corpus)."""
    import tiktoken
    from tiktoken_ext import openai_public as pub

    from lab.encodings import ENDOFTEXT, _gpt2_ranks

    ranks = {b: i for b, i in _gpt2_ranks().items() if i < EOT}
    return tiktoken.Encoding(f"gpt2-{N_MERGES}", pat_str=pub.r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={ENDOFTEXT: EOT}, explicit_n_vocab=VOCAB_SIZE)


def decoder_tokenizer():
    """GPT2TokenizerFast with GPT-2's first N_MERGES merges (ids a prefix of GPT-2's)."""
    from lab.encodings import hf_gpt2_tokenizer

    tok = hf_gpt2_tokenizer(n_merges=N_MERGES)
    tok.model_max_length = CONTEXT
    return tok


def encoder_tokenizer():
    """RobertaTokenizerFast on the same BPE: specials first, BPE ids + ENC_OFFSET, <mask> last."""
    from lab.encodings import hf_roberta_tokenizer

    tok = hf_roberta_tokenizer(n_merges=N_MERGES)
    tok.model_max_length = CONTEXT
    return tok


def to_encoder_ids(ids):
    """Decoder ids (numpy/torch integer array) -> encoder ids: +ENC_OFFSET, <|endoftext|> -> </s>."""
    out = ids.astype("int64") + ENC_OFFSET if hasattr(ids, "astype") else ids.long() + ENC_OFFSET
    out[ids == EOT] = ENC_EOS
    return out


def encoder_rows(x):
    """Decoder-id windows (B, T-2) -> encoder ids (B, T): <s> window </s>, <|endoftext|> -> </s>."""
    import torch

    body = to_encoder_ids(x)
    B = x.shape[0]
    bos = torch.full((B, 1), ENC_BOS, dtype=body.dtype, device=x.device)
    eos = torch.full((B, 1), ENC_EOS, dtype=body.dtype, device=x.device)
    return torch.cat([bos, body, eos], dim=1)


def save_tokenizers(path: str | Path) -> None:
    """Write both tokenizers' files to path/gpt2 and path/roberta (the GPU run loads these)."""
    path = Path(path)
    decoder_tokenizer().save_pretrained(path / "gpt2")
    encoder_tokenizer().save_pretrained(path / "roberta")
