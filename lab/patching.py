"""Activation patching (heads page, chapters 04, 05): how much of the clean answer comes back when one piece of the
clean run is written into the corrupted run (Meng et al. 2022; Wang et al. 2022; Heimersheim & Nanda 2024).

For the "Heads at work" page and `python -m lab heads patch`.

- Two prompts of the same length in tokens, a clean one and a corrupted one, and two answer tokens: the first
  token of each answer as it would follow the prompt (a space is put before an answer that has none when the
  prompt does not end in one: answers are next words), or, for an answer left blank, that prompt's own top next
  token. The defaults copy a word the model has just read (the copying the heads page's induction heads do):
  "The cat sat on the mat. The cat sat on the" -> " mat", against "... box ..." -> " box"; course-gpt2 does not
  resolve the trophy pair (both of its prompts prefer " trophy" to " suitcase": logit difference 2.50 and 1.90).
- Logit difference: logit[clean answer] - logit[corrupted answer] at the last position. The score of a patched
  run is (patched - corrupted) / (clean - corrupted): 0 = the corrupted run's, 1 = the clean run's.
- Residual stream: the input of block L (TransformerLens' resid_pre; block 0's input is the embeddings) at one
  position, for every layer x position: an (L, T) grid. Patching every position of a block's input gives the
  clean run exactly (1); positions before the first token that differs give 0 at every layer (the causal mask).
- Heads: one head's output (its slice of the attention output before c_proj, lab.gpt2's "attn.mixed") at the last
  position only, for every layer x head: an (L, H) grid.
- How: GPT-2's forward in plain torch (lab.gpt2) on the model's own weights, only read. The clean and corrupted
  runs keep what the patches need; the patched runs of one layer go through lab.gpt2.block as one batch, starting
  from the corrupted run's input of that block (the blocks before it are the corrupted run's, unchanged), and only
  the last position's two answer logits are computed (ln_f, then the dot with wte[clean] - wte[corrupted]: the
  output layer is wte itself). Nothing of the shared model is written, hooked or toggled.
- GPT-1 the same way (lab.gpt1: GPT-2's pieces with the layer norms after each sub-block, and no ln_f, so the two
  answer logits are the last block's output dotted with the direction).
"""

from __future__ import annotations

import numpy as np

from lab.heads import HeadsError, check_model, ids_of
from lab.models import context_of
from lab.text import check_fits, encode, readable_labels

# (clean prompt, corrupted prompt, clean answer, corrupted answer) per language: the same length in tokens in the
# course tokenizer (12 and 17 tokens) and in GPT-2's (12 and 15).
PAIRS = {
    "en": ("The cat sat on the mat. The cat sat on the", "The cat sat on the box. The cat sat on the", " mat", " box"),
    "pt": ("O gato subiu no muro. O gato subiu no", "O gato subiu no carro. O gato subiu no", " muro", " carro"),
}
GAP = 1e-3  # the least |clean - corrupted| logit difference the score divides by
MOST = 48  # tokens a prompt may have: the grid patches T positions in T runs per layer ([T, T, 4C] in the MLP)


class Keep:
    """A lab.gpt2 recorder that keeps every block's input ("resid": L + 1 entries, the last the last block's
    output) and every layer's head outputs ("mixed", [H, T, D]); it returns what it is given."""

    def __init__(self, resid: list | None = None, mixed: list | None = None, out: str = "x_plus_mlp"):
        self.resid = [] if resid is None else resid
        self.mixed = [] if mixed is None else mixed
        self.out = out  # the step that is a block's output (lab.gpt1.Family.out: GPT-1's is its "ln_2")

    def __call__(self, name, x):
        if name in ("wte_plus_wpe", self.out):  # block 0's input, then each block's output in order
            self.resid.append(x)
        elif name == "attn.mixed":
            self.mixed.append(x)
        return x

    def layer(self, i: int):
        return Keep(self.resid, self.mixed, self.out)


class PatchHeads:
    """A block's recorder for a batch of H runs: run b gets head b's last-position output from `clean` [H, T, D]."""

    def __init__(self, clean):
        self.clean = clean

    def __call__(self, name, x):
        if name != "attn.mixed":
            return x
        import torch

        x = x.clone()  # [B = H, H, T, D]
        b = torch.arange(x.shape[0])
        x[b, b, -1] = self.clean[b, -1]
        return x


def answer_id(tokenizer, prompt: str, answer: str | None) -> int | None:
    """The first token of `answer` as it follows `prompt` (a space put before it when neither has one), or None
    for a blank answer."""
    if answer is None or not answer.strip():
        return None
    if not answer[0].isspace() and prompt and not prompt[-1].isspace():
        answer = " " + answer
    return encode(tokenizer, answer, "answer")[0]


def check_pair(model, clean: list[int], corrupt: list[int]) -> None:
    """Both prompts some text, the same length in tokens, not the same, within the context and MOST tokens; else
    HeadsError."""
    for which, ids in (("clean", clean), ("corrupted", corrupt)):
        if not ids:
            raise HeadsError(f"the {which} prompt is empty: type some text", "empty_text", which=which)
    if len(clean) != len(corrupt):
        raise HeadsError(f"the two prompts must be the same length in tokens: the clean one has {len(clean)}, the "
                         f"corrupted one {len(corrupt)}", "lengths_differ", clean=len(clean), corrupt=len(corrupt))
    if clean == corrupt:
        raise HeadsError("the two prompts are the same: change a word of the corrupted one", "same_prompts")
    check_fits(len(clean), context_of(model.config), HeadsError)
    if len(clean) > MOST:
        raise HeadsError(f"patching takes prompts of at most {MOST} tokens; these have {len(clean)}", "pair_too_long",
                         tokens=len(clean), most=MOST)


def _rest(f, h, start: int, rec=None):
    """Blocks start..L-1 of the forward `f` (lab.gpt1.Family) on a batch h [B, T, C] (block `start` recorded by
    `rec`), then what precedes the output layer (GPT-2's ln_f) at the last position: [B, C]."""
    from lab import gpt2

    w = f.w
    for i in range(start, len(w["h"])):
        h, _ = f.block(h, w["h"][i], w["n_head"], w["eps"], None, rec if rec and i == start else gpt2.nothing)
    return f.final(w, h[:, -1])


def runs(model, clean: list[int], corrupt: list[int], answers: tuple[int | None, int | None]) -> dict:
    """The two runs and every patched one: the answers (a blank one = that run's top token), the clean and
    corrupted logit differences, and the patched runs' differences, "resid" (L, T) and "heads" (L, H)."""
    import torch

    from lab.gpt1 import family

    f = family(model)
    w = f.w
    with torch.inference_mode():
        kept = Keep(out=f.out), Keep(out=f.out)
        last = [f.model(w, torch.tensor(ids), rec=k)[0][-1] for ids, k in zip((clean, corrupt), kept, strict=True)]
        a, b = (int(lg.argmax()) if x is None else x for x, lg in zip(answers, last, strict=True))
        if a == b:
            raise HeadsError("the clean and corrupted answers are the same token: give two different answers",
                             "same_answer", token=a)
        direction = w["wte"][a] - w["wte"][b]  # [C]: logit[a] - logit[b] = ln_f(x) @ direction (GPT-1: x @ ...)
        c, x = kept[0], kept[1]
        ends = [float(f.final(w, k.resid[-1][-1:])[0] @ direction) for k in kept]
        n, pos = len(clean), torch.arange(len(clean))
        resid, heads = [], []
        for layer in range(len(w["h"])):
            h = x.resid[layer].expand(n, -1, -1).clone()  # [T runs, T, C]: run p gets the clean row p
            h[pos, pos] = c.resid[layer]
            resid.append((_rest(f, h, layer) @ direction).double().numpy())
            h = x.resid[layer].expand(w["n_head"], -1, -1)  # [H runs, T, C]: read only
            heads.append((_rest(f, h, layer, PatchHeads(c.mixed[layer])) @ direction).double().numpy())
    return {"answers": [a, b], "clean_diff": ends[0], "corrupt_diff": ends[1], "resid_diff": np.array(resid),
            "heads_diff": np.array(heads)}


def patching(model, tokenizer, clean: str, corrupt: str, clean_answer: str | None = None,
             corrupt_answer: str | None = None) -> dict:
    """The patching experiment on two prompts (see the module docstring): ids, token labels, answers and their
    texts, the two logit differences, and the scores "resid" (L, T) and "heads" (L, H) with their raw logit
    differences ("resid_diff", "heads_diff")."""
    from lab.text import token_texts

    check_model(model)
    ids = ids_of(tokenizer, clean), ids_of(tokenizer, corrupt)
    check_pair(model, *ids)
    given = answer_id(tokenizer, clean, clean_answer), answer_id(tokenizer, corrupt, corrupt_answer)
    r = runs(model, ids[0], ids[1], given)
    gap = r["clean_diff"] - r["corrupt_diff"]
    if abs(gap) < GAP:
        raise HeadsError(f"the clean and corrupted logit differences are the same ({r['clean_diff']:.4f}): "
                         "nothing to bring back", "no_gap", diff=r["clean_diff"])
    return {"clean_ids": ids[0], "corrupt_ids": ids[1], "labels": readable_labels(tokenizer, ids[0]),
            "corrupt_labels": readable_labels(tokenizer, ids[1]), "answer_texts": token_texts(tokenizer, r["answers"]),
            "given": [x is not None for x in given], "where": "block input", **r,
            "resid": (r["resid_diff"] - r["corrupt_diff"]) / gap, "heads": (r["heads_diff"] - r["corrupt_diff"]) / gap}


def defaults(lang: str = "en") -> tuple[str, str, str, str]:
    """The default pair in a language (English for any other)."""
    return PAIRS.get(lang, PAIRS["en"])
