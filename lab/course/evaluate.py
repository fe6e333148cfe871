"""Evaluate the course models on the held-out split: the numbers and pictures the docs report.

Decoder: held-out perplexity (all, English, Portuguese) against an add-one unigram baseline fitted
on the same training tokens, copying on repeated random tokens, seeded samples. Encoder:
masked-token accuracy against always guessing the most frequent training token. Both: per-head
attention scores (mean weight on the previous token, the first token, the token itself) and
heatmaps of the best heads. Runs on CPU on the saved models: `python -m lab course-eval`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lab.course import tokenizer as ct

PROMPTS = {"en": "The Debian system is", "pt": "O sistema Debian é"}
HEAD_WINDOWS, HEAD_LEN = 32, 128


def load(path: str | Path, kind: str, device: str = "cpu"):
    """(model in float32 with eager attention, tokenizer) from a saved HF directory."""
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel, RobertaForMaskedLM

    cls = GPT2LMHeadModel if kind == "decoder" else RobertaForMaskedLM
    model = cls.from_pretrained(path, dtype=torch.float32, attn_implementation="eager")
    return model.to(device).eval(), AutoTokenizer.from_pretrained(path)


def _windows(stream, length: int, limit: int | None = None):
    """Non-overlapping windows of `length` tokens from a 1-D int64 tensor: (n, length)."""
    n = len(stream) // length
    if limit:
        n = min(n, limit)
    return stream[: n * length].view(n, length)


def decoder_nll(model, stream, length: int, batch: int = 32, limit: int | None = None):
    """(per-target negative log-likelihoods, target ids): positions 1..T-1 of each window
    (at most `limit` windows)."""
    import torch

    device = next(model.parameters()).device
    rows = _windows(stream, length, limit)
    nlls, targets = [], []
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            x = rows[i: i + batch].to(device)  # (B, T)
            logits = model(input_ids=x).logits.float()  # (B, T, V)
            logp = torch.log_softmax(logits[:, :-1], dim=-1)
            y = x[:, 1:]
            nlls.append(-logp.gather(-1, y[..., None])[..., 0].flatten().cpu())
            targets.append(y.flatten().cpu())
    return torch.cat(nlls), torch.cat(targets)


def unigram_logprobs(train, vocab: int):
    """Add-one smoothed unigram log-probabilities fitted on the training token ids: (vocab,)."""
    import numpy as np

    counts = np.bincount(train, minlength=vocab).astype(np.float64)
    return np.log((counts + 1) / (counts.sum() + vocab))


def perplexities(model, train_np, streams: dict, length: int, limit: int | None = None) -> dict:
    """Model and unigram perplexity on the same held-out targets, per stream and pooled ("all")."""
    import numpy as np
    import torch

    uni = unigram_logprobs(train_np, ct.VOCAB_SIZE)
    parts = {name: decoder_nll(model, torch.from_numpy(arr.astype(np.int64)), length, limit=limit)
             for name, arr in streams.items()}
    parts["all"] = tuple(torch.cat(x) for x in zip(*parts.values(), strict=True))
    out = {}
    for name, (nll, y) in parts.items():
        ppl = math.exp(float(nll.mean()))
        uni_ppl = math.exp(-float(uni[y.numpy()].mean()))
        out[name] = {"tokens": len(y), "perplexity": ppl, "unigram_perplexity": uni_ppl,
                     "ratio": ppl / uni_ppl, "loss": float(nll.mean())}
    return out


def copying(model, length: int = 50, n: int = 16, seed: int = 0) -> dict:
    """Loss on random tokens said once and then repeated: the repeat is cheap only if heads copy."""
    import torch

    length = min(length, model.config.n_positions // 2)
    gen = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    half = torch.randint(256, ct.EOT, (n, length), generator=gen)
    x = torch.cat([half, half], dim=1).to(device)  # (n, 2*length)
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=x).logits.float()[:, :-1], dim=-1)
    nll = -logp.gather(-1, x[:, 1:, None])[..., 0]  # (n, 2*length-1)
    return {"first_half_loss": float(nll[:, : length - 1].mean()),
            "second_half_loss": float(nll[:, length:].mean()), "length": length}


def masked_accuracy(model, train_np, test_np, length: int, seed: int = 0, batch: int = 32,
                    limit: int | None = None) -> dict:
    """Accuracy at 15% masked held-out positions (all replaced by <mask>) vs the most frequent
    training token as the guess at every masked position."""
    import numpy as np
    import torch


    device = next(model.parameters()).device
    body = np.bincount(train_np[train_np != ct.EOT], minlength=ct.VOCAB_SIZE)
    top = int(body.argmax()) + ct.ENC_OFFSET
    rows = ct.encoder_rows(_windows(torch.from_numpy(test_np.astype(np.int64)), length - 2, limit))
    gen = torch.Generator().manual_seed(seed)
    chosen = (torch.rand(rows.shape, generator=gen) < 0.15) & (rows >= ct.ENC_OFFSET)
    right = total = right_base = 0
    nll = 0.0
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            x, m = rows[i: i + batch], chosen[i: i + batch]
            inputs = x.masked_fill(m, ct.ENC_MASK).to(device)
            logits = model(input_ids=inputs).logits  # (B, T, V)
            picked = logits[m.to(device)].float()  # (n_masked, V)
            y = x[m].to(device)
            right += int((picked.argmax(-1) == y).sum())
            right_base += int((y == top).sum())
            nll += float(torch.nn.functional.cross_entropy(picked, y, reduction="sum"))
            total += len(y)
    return {"masked_tokens": total, "accuracy": right / total, "baseline_accuracy": right_base / total,
            "baseline_token_id": top, "masked_loss": nll / total}


def attention(model, rows):
    """Attention weights of every layer: (layers, batch, heads, T, T) float32 on CPU."""
    import torch

    device = next(model.parameters()).device
    with torch.no_grad():
        out = model(input_ids=rows.to(device), output_attentions=True)
    return torch.stack([a.float().cpu() for a in out.attentions])


def head_scores(model, rows) -> dict:
    """Per layer and head, the mean weight a query at position i >= 2 puts on position i-1
    ("previous"), on position 0 ("first") and on itself ("self"); plus the best head of each."""
    import torch

    A = attention(model, rows)  # (L, B, H, T, T)
    T = A.shape[-1]
    i = torch.arange(2, T)
    scores = {"previous": A[..., i, i - 1], "first": A[..., i, 0], "self": A[..., i, i]}
    out = {name: s.mean(dim=(1, 3)).tolist() for name, s in scores.items()}  # (L, H)
    for name in scores:
        grid = torch.tensor(out[name])
        flat = int(grid.argmax())
        out[f"best_{name}"] = {"layer": flat // grid.shape[1], "head": flat % grid.shape[1],
                               "score": float(grid.max())}
    return out


def sample(model, tok, prompt: str, new_tokens: int = 50, seed: int = 0, temperature: float = 0.8,
           top_k: int = 40) -> str:
    """Seeded top-k sampling continuation of `prompt` (prompt included), stops at <|endoftext|>."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    ids = tok(prompt)["input_ids"]
    limit = model.config.n_positions
    with torch.no_grad():
        for _ in range(new_tokens):
            logits = model(input_ids=torch.tensor([ids[-limit:]], device=device)).logits[0, -1].float().cpu()
            vals, idx = torch.topk(logits / temperature, top_k)
            nxt = int(idx[torch.multinomial(torch.softmax(vals, -1), 1, generator=gen)])
            if nxt == ct.EOT:
                break
            ids.append(nxt)
    return tok.decode(ids)


def token_labels(tok, ids) -> list[str]:
    """Readable one-token labels: spaces shown as '·', partial UTF-8 bytes as '�'."""
    return [tok.decode([int(i)]).replace(" ", "·").replace("\n", "\\n")[:12] for i in ids]


def heatmap_png(dec, enc, dtok, scores_dec, scores_enc, test_np, path: Path) -> Path:
    """Heatmaps of the decoder's best previous-token and first-token heads and the encoder's best
    previous-token head, on the first 24 tokens of a held-out document."""
    import numpy as np
    import torch

    from lab.course import plots

    ends = np.flatnonzero(test_np == ct.EOT)
    start = next((int(e) + 1 for e in ends if np.all(test_np[e + 1: e + 25] != ct.EOT)), 0)
    snippet = torch.from_numpy(test_np[start: start + 24].astype(np.int64))[None]
    labels = token_labels(dtok, snippet[0])
    panels = []
    A = attention(dec, snippet)
    for name in ("previous", "first"):
        b = scores_dec[f"best_{name}"]
        panels.append((f"decoder L{b['layer']}H{b['head']} {name} {b['score']:.2f}",
                       A[b["layer"], 0, b["head"]].tolist(), labels))
    Ae = attention(enc, ct.encoder_rows(snippet))[:, :, :, 1:-1, 1:-1]  # drop <s>, </s> from view
    b = scores_enc["best_previous"]
    panels.append((f"encoder L{b['layer']}H{b['head']} previous {b['score']:.2f}",
                   Ae[b["layer"], 0, b["head"]].tolist(), labels))
    return plots.heatmaps(panels, path)


def curve_png(training: dict, path: Path) -> Path:
    """Training and held-out loss against tokens seen, one panel per model."""
    from lab.course import plots

    panels = []
    for kind in ("decoder", "encoder"):
        if kind not in training:
            continue
        c = training[kind]["curve"]
        xs = [p["tokens"] for p in c]
        panels.append((f"{kind} ({training[kind]['steps']} steps)",
                       {"train": (xs[1:], [p["train_loss"] for p in c][1:]),
                        "held-out": (xs, [p["test_loss"] for p in c])}))
    return plots.line_chart(panels, path, xlabel="tokens seen", ylabel="loss (nats/token)")


def run(out: str | Path, corpus: str | Path, device: str = "cpu", training: dict | None = None,
        limit: int | None = None, log=print) -> dict:
    """Evaluate the models saved under `out` (on at most `limit` held-out windows per stream, all by
    default); write results.json and the PNGs there; return the results."""
    import numpy as np
    import torch


    out, corpus = Path(out), Path(corpus)
    if training is None and (out / "training.json").exists():
        training = json.loads((out / "training.json").read_text())
    tokens = {name: np.load(corpus / "tokens" / f"{name}.npy") for name in ("train", "test", "test_en", "test_pt")}
    results: dict = {"training": training or {}}
    dec = enc = None
    if (out / "course-gpt2").exists():
        dec, dtok = load(out / "course-gpt2", "decoder", device)
        T = dec.config.n_positions
        ppl = perplexities(dec, tokens["train"], {"en": tokens["test_en"], "pt": tokens["test_pt"]}, T, limit)
        rows = _windows(torch.from_numpy(tokens["test"].astype(np.int64)), min(HEAD_LEN, T), HEAD_WINDOWS)
        heads = head_scores(dec, rows)
        results["decoder"] = {"perplexity": ppl, "copying": copying(dec), "heads": heads,
                              "samples": {lang: sample(dec, dtok, p) for lang, p in PROMPTS.items()}}
        log(f"decoder: held-out perplexity {ppl['all']['perplexity']:.1f} vs unigram "
            f"{ppl['all']['unigram_perplexity']:.1f} (ratio {ppl['all']['ratio']:.3f}); best previous-token "
            f"head {heads['best_previous']}; best first-token head {heads['best_first']}")
    if (out / "course-roberta").exists():
        enc, _ = load(out / "course-roberta", "encoder", device)
        T = enc.config.max_position_embeddings - 2
        acc = masked_accuracy(enc, tokens["train"], tokens["test"], T, limit=limit)
        rows = ct.encoder_rows(_windows(torch.from_numpy(tokens["test"].astype(np.int64)), min(HEAD_LEN, T) - 2,
                                     HEAD_WINDOWS))
        results["encoder"] = {"masked": acc, "heads": head_scores(enc, rows)}
        log(f"encoder: masked accuracy {acc['accuracy']:.3f} vs most-frequent-token "
            f"{acc['baseline_accuracy']:.3f}; best previous-token head {results['encoder']['heads']['best_previous']}")
    for name in ("course-gpt2", "course-roberta"):
        if (out / name).exists():
            results.setdefault("sizes", {})[name] = sum(f.stat().st_size for f in (out / name).iterdir())
    (out / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    try:  # pictures last: a drawing problem must not lose the numbers
        if dec is not None and enc is not None:
            heatmap_png(dec, enc, dtok, results["decoder"]["heads"], results["encoder"]["heads"],
                        tokens["test"], out / "heads.png")
        if training:
            curve_png(training, out / "curve.png")
    except Exception as e:  # noqa: BLE001 - reported, the results are already written
        log(f"drawing the PNGs failed: {type(e).__name__}: {e}")
    return results
