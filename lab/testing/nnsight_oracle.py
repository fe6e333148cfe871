"""nnsight (PyPI, requirements-dev.txt) as the outside oracle of the heads page's experiments: the tests compare
lab.patching with it, and `python -m lab bench --only heads` times it beside lab's. Imported only there (nnsight
is a development dependency)."""

from __future__ import annotations

import numpy as np
import torch


def patching(model, tokenizer, clean, corrupt, a, b) -> dict:
    """Activation patching written with nnsight's own interventions on `model` (nnsight wraps it: pass a copy of a
    shared one): the clean run's block inputs and c_proj inputs saved, then per layer one trace with one invoke per
    patch (a block input's row, or one head's slice of c_proj's input at the last position), the logit difference
    read from the model's own logits (the usual way to batch patches in nnsight). {"clean_diff", "corrupt_diff",
    "resid_diff" (L, T), "heads_diff" (L, H)}."""
    from nnsight import LanguageModel

    lm = LanguageModel(model, tokenizer=tokenizer)
    cfg = model.config
    d, n = cfg.n_embd // cfg.n_head, len(clean)
    ci, xi = torch.tensor([clean]), torch.tensor([corrupt])
    saved, ends = [], []
    with lm.trace(ci):
        for layer in range(cfg.n_layer):
            saved.append((lm.transformer.h[layer].input.save(), lm.transformer.h[layer].attn.c_proj.input.save()))
        ends.append(lm.output.logits.save())
    with lm.trace(xi):
        ends.append(lm.output.logits.save())
    resid, per_head = np.zeros((cfg.n_layer, n)), np.zeros((cfg.n_layer, cfg.n_head))
    for layer in range(cfg.n_layer):
        outs = []
        with lm.trace() as tracer:
            for p in range(n):
                with tracer.invoke(xi):
                    lm.transformer.h[layer].input[:, p] = saved[layer][0][:, p]
                    logits = lm.output.logits[0, -1]
                    outs.append((logits[a] - logits[b]).save())
            for h in range(cfg.n_head):
                with tracer.invoke(xi):
                    sl = slice(h * d, (h + 1) * d)
                    lm.transformer.h[layer].attn.c_proj.input[:, -1, sl] = saved[layer][1][:, -1, sl]
                    logits = lm.output.logits[0, -1]
                    outs.append((logits[a] - logits[b]).save())
        resid[layer] = [float(o) for o in outs[:n]]
        per_head[layer] = [float(o) for o in outs[n:]]
    clean_diff, corrupt_diff = (float(e[0, -1, a] - e[0, -1, b]) for e in ends)
    return {"clean_diff": clean_diff, "corrupt_diff": corrupt_diff, "resid_diff": resid, "heads_diff": per_head}
