"""One forward pass of lab.gpt2 recorded step by step, checked against transformers (chapter 13).

`record` runs lab.gpt2.model on a loaded GPT-2-family model's own weights (read, never written) with a
`Trace`: for every named step of one chosen layer and of the model around it, the output's shape and a
small view (the chosen head's slice, the first columns, each row's norm, the top tokens of the logits).
`trace` is the CLI's contract; `kv_steps` decodes token by token with and without the key-value cache,
timing both. `ORIGINAL` maps each function of openai/gpt-2's src/model.py to ours.
"""

from __future__ import annotations

import inspect
import re
import time

from lab import gpt2
from lab.errors import LabError
from lab.models import require_decoder
from lab.text import check_fits, encode, token_texts

COLUMNS = 64  # columns of a step's values kept for the page (a row's norm is over all of them)
TOP = 5
_REC = re.compile(r'rec\("([a-z_0-9.]+)"')
_SHAPE = re.compile(r"#[^\[]*\[([^\]]+)\]")  # the shape comment: "# [H, T, S]", "# split_heads: [H, T, D]"
ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh")  # both are GELU's tanh form, lab.gpt2.gelu
ORIGINAL_URL = "https://github.com/openai/gpt-2/blob/master/src/model.py"
# openai/gpt-2 src/model.py (175 lines): function -> (first line, last line, our function in lab.gpt2 or None)
ORIGINAL = {
    "default_hparams": (5, 12, None), "shape_list": (14, 18, None), "softmax": (20, 23, None),
    "gelu": (25, 26, "gelu"), "norm": (28, 39, "norm"), "split_states": (41, 44, "split_states"),
    "merge_states": (46, 49, "merge_states"), "conv1d": (51, 57, "conv1d"),
    "attention_mask": (59, 67, "attention_mask"), "attn": (70, 113, "attn"), "mlp": (116, 121, "mlp"),
    "block": (124, 131, "block"), "past_shape": (133, 134, None), "expand_tile": (136, 140, None),
    "positions_for": (142, 145, "positions_for"), "model": (148, 175, "model"),
}


class TraceError(LabError):
    """Bad input: `reason` "encoder" (model), "not_gpt2" (model, model_type: the page runs GPT-2's own
    architecture only), "activation" (model, activation), "untied" (model), "layer" (value, layers), "head"
    (value, heads), "too_long" (tokens, context); "empty" comes from lab.text."""


def check(loaded, layer: int = 0, head: int = 0) -> None:
    """TraceError unless the model is a GPT-2 this file can run and layer/head name one of its heads."""
    cfg = loaded.model.config
    require_decoder(loaded, TraceError, "lab.gpt2 (GPT-2's code)")
    if cfg.model_type != "gpt2":
        raise TraceError(f"{loaded.name} is a {cfg.model_type} model, not GPT-2: this code runs GPT-2's "
                         "architecture only", "not_gpt2", model=loaded.name, model_type=cfg.model_type)
    if cfg.activation_function not in ACTIVATIONS:
        raise TraceError(f"{loaded.name} uses {cfg.activation_function}, not GPT-2's GELU", "activation",
                         model=loaded.name, activation=cfg.activation_function)
    out = loaded.model.get_output_embeddings()
    if out is None or out.weight.data_ptr() != loaded.model.transformer.wte.weight.data_ptr():
        raise TraceError(f"{loaded.name} has an output layer of its own, not wte", "untied", model=loaded.name)
    for what, value, count in (("layer", layer, cfg.n_layer), ("head", head, cfg.n_head)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
            raise TraceError(f"{what} must be from 0 to {count - 1}, not {value}", what, value=value,
                             **{f"{what}s": count})


def block_weights(b) -> dict:
    """One block's parameters under lab.gpt2's names (GPT-2's and GPT-1's blocks name them alike), the module's own
    tensors."""
    return {"ln_1.g": b.ln_1.weight, "ln_1.b": b.ln_1.bias, "ln_2.g": b.ln_2.weight, "ln_2.b": b.ln_2.bias,
            "attn.c_attn.w": b.attn.c_attn.weight, "attn.c_attn.b": b.attn.c_attn.bias,
            "attn.c_proj.w": b.attn.c_proj.weight, "attn.c_proj.b": b.attn.c_proj.bias,
            "mlp.c_fc.w": b.mlp.c_fc.weight, "mlp.c_fc.b": b.mlp.c_fc.bias,
            "mlp.c_proj.w": b.mlp.c_proj.weight, "mlp.c_proj.b": b.mlp.c_proj.bias}


def weights(model) -> dict:
    """The parameters lab.gpt2 reads, by the original's names, as the model's own tensors (no copies)."""
    t, cfg = model.transformer, model.config
    layers = [block_weights(b) for b in t.h]
    return {"wte": t.wte.weight, "wpe": t.wpe.weight, "ln_f.g": t.ln_f.weight, "ln_f.b": t.ln_f.bias,
            "h": layers, "n_head": cfg.n_head, "eps": cfg.layer_norm_epsilon}


def view(name: str, x, head: int, whole: bool = False) -> dict:
    """What the page shows of one step: the shape, the chosen head's slice where there are heads, its first
    COLUMNS columns (all of them when `whole`) and each row's norm (over the finite entries), and the last row's
    top tokens for the logits."""
    shape = list(x.shape)
    if name == "present" or name.endswith("attn.present"):  # "h3.attn.present": the chosen layer's, prefixed
        x = x[..., head, :, :].reshape(-1, x.shape[-2], x.shape[-1])[-2:]  # the chosen head's keys and values
        x = x.transpose(0, 1).reshape(x.shape[1], -1)  # [S, 2D]: each token's key, then its value
    elif x.dim() == 3:
        x = x[head]  # [T, S] or [T, D]
    finite = x.isfinite()
    norms = x.where(finite, 0).norm(dim=-1) if x.dim() > 1 else x.abs().float()
    out = {"name": name, "shape": shape, "values": (x if whole else x[..., :COLUMNS]).float().numpy().copy(),
           "norms": norms.float().numpy().copy()}
    if name == "logits":
        top = x[-1].topk(TOP)
        out["top"] = list(zip(top.indices.tolist(), top.values.tolist(), strict=True))
    return out


class Trace:
    """A recorder for lab.gpt2: the steps of the model and of one layer, each as `view` gives it. `layer(i)` is
    the recorder for block i: one that names its steps "h<i>." and shares this trace's list for the chosen
    layer, lab.gpt2.nothing for the others."""

    def __init__(self, layer: int, head: int, prefix: str = "", steps: list | None = None, whole: tuple = ()):
        self.at, self.head, self.prefix, self.whole = layer, head, prefix, whole
        self.steps = [] if steps is None else steps

    def __call__(self, name, x):
        self.steps.append(view(self.prefix + name, x, self.head, self.prefix + name in self.whole))
        return x

    def layer(self, i: int):
        return Trace(i, self.head, f"h{i}.", self.steps, self.whole) if i == self.at else gpt2.nothing


def run(loaded, ids: list[int], layer: int = 0, head: int = 0, past=None, whole: tuple = ()):
    """lab.gpt2.model over ids with a Trace of (layer, head): (logits [T, V], present, trace); the steps named in
    `whole` keep every column."""
    import torch

    check(loaded, layer, head)
    trace = Trace(layer, head, whole=whole)
    with torch.inference_mode():
        logits, present = gpt2.model(weights(loaded.model), torch.tensor(ids), past, trace)
    return logits, present, trace


def reference_logits(loaded, ids: list[int]):
    """transformers' own logits [T, V] for the same ids (the oracle)."""
    import torch

    with torch.inference_mode():
        return loaded.model(input_ids=torch.tensor([ids])).logits[0]


def token_ids(loaded, text: str) -> list[int]:
    """The text's ids; TraceError when they do not fit in the context."""
    ids = encode(loaded.tokenizer, text)
    check_fits(len(ids), loaded.model.config.n_positions, TraceError, loaded.name)
    return ids


def trace(loaded, text: str, layer: int = 0, head: int = 0) -> dict:
    """The CLI's contract: {"tokens", "steps": [{"name", "shape"}], "attention" (layer, head, after softmax: the
    whole [T, T] matrix, however long the text),
    "top": [{"id", "token", "logit"}] (last position), "max_abs_diff" (ours against transformers' logits)}."""
    check(loaded, layer, head)
    ids = token_ids(loaded, text)
    logits, _, recorded = run(loaded, ids, layer, head, whole=(f"h{layer}.attn.weights",))  # the whole matrix
    diff = (logits - reference_logits(loaded, ids)).abs().max().item()
    steps = {s["name"]: s for s in recorded.steps}
    top = steps["logits"]["top"]
    return {"tokens": token_texts(loaded.tokenizer, ids),
            "steps": [{"name": s["name"], "shape": s["shape"]} for s in recorded.steps],
            "attention": steps[f"h{layer}.attn.weights"]["values"].tolist(),
            "top": [{"id": i, "token": token_texts(loaded.tokenizer, [i])[0], "logit": v} for i, v in top],
            "max_abs_diff": diff}


def _best_time(fn, repeats: int) -> tuple[float, object]:
    """The fastest of `repeats` calls of fn (seconds), after one untimed call (first calls pay one-time costs),
    and its last result."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def kv_steps(loaded, ids: list[int], new: int = 8, repeats: int = 3) -> list[dict]:
    """Greedy decoding of `new` tokens after ids, each step both ways: one token through `past` (the cache)
    and the whole sequence again without it. Per step: the token, the cache's shape after it, the seconds
    each way (best of `repeats`) and the largest |difference| of the next-token logits between the two."""
    import torch

    check(loaded)
    context = loaded.model.config.n_positions
    new = max(0, min(new, context - len(ids)))
    w, seq, rows = weights(loaded.model), list(ids), []
    with torch.inference_mode():
        prefill, (logits, past) = _best_time(lambda: gpt2.model(w, torch.tensor(seq)), repeats)
        rows.append({"step": 0, "token": None, "tokens": len(seq), "cache": list(past.shape),
                     "with_cache": prefill, "without_cache": prefill, "max_abs_diff": 0.0})
        for step in range(1, new + 1):
            nxt = int(logits[-1].argmax())
            seq.append(nxt)
            cached, (logits, grown) = _best_time(lambda: gpt2.model(w, torch.tensor([nxt]), past), repeats)  # noqa: B023
            full, (again, _) = _best_time(lambda: gpt2.model(w, torch.tensor(seq)), repeats)
            rows.append({"step": step, "token": nxt, "tokens": len(seq), "cache": list(grown.shape),
                         "with_cache": cached, "without_cache": full,
                         "max_abs_diff": (logits[-1] - again[-1]).abs().max().item()})
            past = grown
    return rows


def short(name: str) -> str:
    """A step's name as lab/gpt2.py writes it: "h2.attn.q" -> "attn.q"."""
    return re.sub(r"^h\d+\.", "", name)


def pass_order() -> list[str]:
    """The steps lab.gpt2 records, in the order one pass makes them (short names): read by running it once on a
    one-layer GPT-2 of toy sizes."""
    import torch

    from lab import hf_imports

    with hf_imports.LOCK:  # building a model may import more of transformers
        config, model = hf_imports.names("GPT2Config", "GPT2LMHeadModel")
        toy = model(config(n_layer=1, n_embd=4, n_head=2, vocab_size=3, n_positions=2, bos_token_id=0,
                           eos_token_id=0))
    names: list[str] = []

    class Names:
        def __call__(self, name, x):
            names.append(name)
            return x

        def layer(self, i):
            return self

    with torch.inference_mode():
        gpt2.model(weights(toy), torch.tensor([0, 1]), None, Names())
    return list(dict.fromkeys(names))


def source_steps() -> dict[str, dict]:
    """Every step of lab/gpt2.py in pass order: {short name: {"line": the 1-based line of lab/gpt2.py that records
    it, "axes": the axis letters of its shape comment on that line (["H", "T", "S"]; None without one)}}. The
    code page's step slider, marked lines and shapes in words come from here, so a new rec() shows there."""
    found = {}
    for number, line in enumerate(inspect.getsource(gpt2).splitlines(), 1):
        shape = _SHAPE.search(line)
        for name in _REC.findall(line):
            found.setdefault(name, {"line": number,
                                    "axes": [a.strip() for a in shape.group(1).split(",")] if shape else None})
    return {name: found[name] for name in pass_order()}
