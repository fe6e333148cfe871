"""Embedding analogies: one query through lab against a bare torch matmul + topk (analogies page, ch. 02).

`lab.embeddings.analogy(model, tokenizer, " king" − " man" + " woman", k=10)` — word lookup,
3CosAdd over the cached unit-normalised matrix, exclusion, top-k, token texts — against
`unit @ q` + `topk` on the same cached (50,257 × 768) matrix with the ids already known. A GPT-2
with GPT-2 small's embedding shape and random weights (one layer: only the embeddings matter).
The unit matrix is built before timing, as the page builds it once per model. Target ratio 1.3.
"""

from __future__ import annotations

from lab.benchmarks import entry, side_by_side


def benchmarks() -> list[dict]:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from lab import embeddings
    from lab.encodings import hf_gpt2_tokenizer

    tok = hf_gpt2_tokenizer()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_layer=1, n_head=12, n_embd=768)).eval()
    unit = embeddings.unit_matrix(model)  # (V, C), built once
    ids = [embeddings.lookup(tok, w)[0] for w in ("king", "man", "woman")]

    def bare():
        with torch.no_grad():
            q = unit[ids[0]] - unit[ids[1]] + unit[ids[2]]
            return torch.topk(unit @ (q / q.norm()), 10 + 3)

    lab_s, ref_s = side_by_side(lambda: embeddings.analogy(model, tok, "king", "man", "woman", k=10), bare,
                                repeats=31, warmup=3)
    return [entry(f"embeddings: one analogy query (lookup, 3CosAdd, exclusion, top 10) vs bare matmul + topk, "
                  f"{unit.shape[0]:,} x {unit.shape[1]} unit matrix", lab_s, ref_s, 1.3)]
