"""Train the course's small offline models: a GPT-2 decoder and its RoBERTa-style encoder sibling.

Both read the pre-tokenized corpus that lab.course.corpus writes (corpus/tokens/*.npy, uint16 ids of
lab.course.tokenizer) and its tokenizer files, so a run needs only numpy, torch and transformers.
The decoder learns next-token prediction on random windows of the training stream; the encoder
learns masked-token prediction (15% of tokens: 80% <mask>, 10% random, 10% kept) on the same
windows. AdamW, linear warmup then cosine decay, gradient clipping, a fixed seed, and the
checkpoint with the lowest held-out loss is the one saved (fp16 safetensors, HF format), with
`token_counts.npy` beside it: how many times each token id occurred in the training windows drawn
up to that checkpoint's step (the decoder's inputs, repeated halves included; the encoder's windows
before masking, <s> and </s> included), which the analogies page uses to leave out rows the model
barely trained. `replay_counts` recomputes them for a finished run from its seed and step count.
A wall-clock budget (--minutes) is turned into a fixed step count after a short calibration,
so the cosine schedule completes and the run cannot overrun; the step count is logged, and
`--steps N` reruns it deterministically.

Run: python -m lab.course.train --preset gpu --corpus corpus --out runs/gpu   (or `python -m lab train`)
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

from lab.course import tokenizer as ct

PRESETS = {
    # seconds on a laptop CPU: used by the tests on a tiny corpus
    "smoke": dict(n_layer=2, n_embd=32, n_head=4, seq=32, batch=8, lr=3e-3, warmup=10, steps=150,
                  minutes=None, eval_every=50, eval_windows=16, dropout=0.0, repeat_frac=0.25),
    # the training budget: both models in under 2 hours on 2 CPU cores (docs/course-models.md: the runs)
    "cpu": dict(n_layer=4, n_embd=256, n_head=8, seq=256, batch=8, lr=1e-3, warmup=100, steps=None,
                minutes=52.0, eval_every=250, eval_windows=64, dropout=0.0, repeat_frac=0.1),
    # one H200: bf16 autocast, big batches; both models plus evaluation in under 7 minutes
    "gpu": dict(n_layer=4, n_embd=256, n_head=8, seq=256, batch=128, lr=2e-3, warmup=200, steps=None,
                minutes=2.5, eval_every=200, eval_windows=512, dropout=0.1, repeat_frac=0.1),
    # course-gpt2's smaller siblings for the perplexity page's scale curve (chapter 06): same tokenizer,
    # corpus and context, only smaller; constant learning rate after warmup, stopped at a plateau of the
    # held-out loss (its best fell less than 0.5% over the last `patience` evaluations, all together) or
    # at the time budget, whichever comes first.
    "cpu-1x64": dict(n_layer=1, n_embd=64, n_head=2, seq=256, batch=16, lr=3e-3, warmup=100, steps=None,
                     minutes=30.0, eval_every=200, eval_windows=64, dropout=0.0, repeat_frac=0.1,
                     schedule="constant", patience=6, name="course-gpt2-1x64"),
    "cpu-2x128": dict(n_layer=2, n_embd=128, n_head=4, seq=256, batch=16, lr=2e-3, warmup=100, steps=None,
                      minutes=40.0, eval_every=200, eval_windows=64, dropout=0.0, repeat_frac=0.1,
                      schedule="constant", patience=6, name="course-gpt2-2x128"),
}
PLATEAU_GAIN = 0.005  # the best held-out loss must fall by this fraction over `patience` evaluations
MODELS = ("decoder", "encoder")
MASK_PROB = 0.15  # BERT's and RoBERTa's recipe: the share of tokens chosen for prediction; of those,
MASK_SHOWN, MASK_RANDOM = 0.8, 0.1  # shown as <mask>, replaced by a random token, and the rest left unchanged
COUNTS_FILE = "token_counts.npy"  # beside the saved weights (lab.learned reads it)
UNKNOWN_STEPS = 10**9  # the step count of a run with only a time budget, until its calibration


def pick_device(name: str) -> str:
    """'auto' -> 'cuda' when available, else 'cpu'; other names pass through."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def build_model(kind: str, cfg: dict):
    """A freshly initialised GPT2LMHeadModel ("decoder") or RobertaForMaskedLM ("encoder")."""
    from transformers import GPT2Config, GPT2LMHeadModel, RobertaConfig, RobertaForMaskedLM

    d = cfg["dropout"]
    if kind == "decoder":
        conf = GPT2Config(vocab_size=ct.VOCAB_SIZE, n_positions=cfg["seq"], n_embd=cfg["n_embd"],
                          n_layer=cfg["n_layer"], n_head=cfg["n_head"], resid_pdrop=d, embd_pdrop=d,
                          attn_pdrop=d, bos_token_id=ct.EOT, eos_token_id=ct.EOT,
                          tie_word_embeddings=True)
        return GPT2LMHeadModel(conf)
    conf = RobertaConfig(vocab_size=ct.ENC_VOCAB_SIZE, hidden_size=cfg["n_embd"],
                         num_hidden_layers=cfg["n_layer"], num_attention_heads=cfg["n_head"],
                         intermediate_size=4 * cfg["n_embd"], max_position_embeddings=cfg["seq"] + 2,
                         hidden_dropout_prob=d, attention_probs_dropout_prob=d, type_vocab_size=1,
                         pad_token_id=ct.ENC_PAD, bos_token_id=ct.ENC_BOS, eos_token_id=ct.ENC_EOS,
                         tie_word_embeddings=True)
    return RobertaForMaskedLM(conf)


def windows(stream, starts, length: int):
    """Rows stream[s : s + length] for each start s: (len(starts), length) int64."""
    import torch

    return stream[starts[:, None] + torch.arange(length, device=stream.device)[None, :]]


def decoder_batch(stream, gen, cfg: dict):
    """(input_ids,) of B random windows of `seq` tokens; a fraction are one half-window said twice
    (repeated text rewards copying, which needs a previous-token head)."""
    import torch

    B, T = cfg["batch"], cfg["seq"]
    starts = torch.randint(0, len(stream) - T, (B,), generator=gen).to(stream.device)
    x = windows(stream, starts, T)  # (B, T)
    n_rep = int(round(B * cfg["repeat_frac"]))
    if n_rep:
        half = x[:n_rep, : T // 2]
        x[:n_rep] = torch.cat([half, half], dim=1)[:, :T]
    return x


def mask_tokens(ids, gen):
    """(inputs, labels) for masked LM: 15% of non-special tokens chosen; of those 80% -> <mask>,
    10% -> a random token, 10% unchanged; labels are -100 where nothing is predicted."""
    import torch

    probs = torch.rand(ids.shape, generator=gen).to(ids.device)
    action = torch.rand(ids.shape, generator=gen).to(ids.device)
    rand_tok = torch.randint(ct.ENC_OFFSET, ct.ENC_MASK, ids.shape, generator=gen).to(ids.device)
    chosen = (probs < MASK_PROB) & (ids >= ct.ENC_OFFSET)
    labels = torch.where(chosen, ids, torch.full_like(ids, -100))
    inputs = ids.clone()
    inputs[chosen & (action < MASK_SHOWN)] = ct.ENC_MASK
    swap = chosen & (action >= MASK_SHOWN) & (action < MASK_SHOWN + MASK_RANDOM)
    inputs[swap] = rand_tok[swap]
    return inputs, labels


def encoder_batch(stream, gen, cfg: dict):
    """(input_ids, labels) of B random masked windows, `seq` tokens each with <s> and </s>."""
    import torch

    B, T = cfg["batch"], cfg["seq"]
    starts = torch.randint(0, len(stream) - T, (B,), generator=gen).to(stream.device)
    return mask_tokens(ct.encoder_rows(windows(stream, starts, T - 2)), gen)


def batch_tokens(kind: str, batch):
    """The token ids a training batch drew, (B, T): the decoder's inputs; the encoder's windows before
    masking (a masked or swapped position holds its original id in the labels)."""
    import torch

    if kind == "decoder":
        return batch
    inputs, labels = batch
    return torch.where(labels >= 0, labels, inputs)


def replay_counts(kind: str, cfg: dict, stream, seed: int, steps: int, init_counts=None):
    """How often each token id occurred in the batches a run drew in its first `steps` steps, (V,) int64:
    the trainer's own batch sampler replayed with the run's seed (no model, no optimiser: only the
    batch generator draws from it). `stream` is the training stream (int64 tensor, any device)."""
    import torch

    gen = torch.Generator().manual_seed(seed + (0 if kind == "decoder" else 1))
    batch_fn = decoder_batch if kind == "decoder" else encoder_batch
    size = ct.VOCAB_SIZE if kind == "decoder" else ct.ENC_VOCAB_SIZE
    counts = torch.zeros(size, dtype=torch.int64, device=stream.device)
    for _ in range(steps):
        counts += torch.bincount(batch_tokens(kind, batch_fn(stream, gen, cfg)).flatten(), minlength=size)
    counts = counts.cpu()
    return counts + torch.as_tensor(init_counts) if init_counts is not None else counts


def estimate_counts(kind: str, cfg: dict, stream, steps: int):
    """The counts `steps` steps of random windows draw on average, (V,) float64: each occurrence of a token
    in the training stream times the windows covering a position, steps * batch * body / (len - body)
    (a repeated half-window counts its tokens twice and the other half not at all: the same on average);
    for the encoder, ids shifted as lab.course.tokenizer does and one <s> and </s> per window. For a run
    whose exact training stream is gone (the shipped models: see docs/analogies.md)."""
    import numpy as np

    ids = np.asarray(stream, dtype=np.int64)
    body = cfg["seq"] if kind == "decoder" else cfg["seq"] - 2
    if kind == "encoder":
        ids = ct.to_encoder_ids(ids)
    size = ct.VOCAB_SIZE if kind == "decoder" else ct.ENC_VOCAB_SIZE
    counts = np.bincount(ids, minlength=size) * (steps * cfg["batch"] * body / (len(ids) - body))
    if kind == "encoder":
        counts[[ct.ENC_BOS, ct.ENC_EOS]] += steps * cfg["batch"]
    return counts


def held_out(kind: str, stream, cfg: dict, seed: int = 0):
    """The fixed held-out batches used during training: evenly spaced windows, fixed masks."""
    import torch

    T = cfg["seq"] if kind == "decoder" else cfg["seq"] - 2
    n = max(1, min(cfg["eval_windows"], len(stream) // T))
    x = windows(stream, torch.arange(n, device=stream.device) * T, T)
    rows = x if kind == "decoder" else ct.encoder_rows(x)
    gen = torch.Generator().manual_seed(seed)
    batches = []
    for i in range(0, n, cfg["batch"]):
        part = rows[i: i + cfg["batch"]]
        batches.append((part, part) if kind == "decoder" else mask_tokens(part, gen))
    return batches


def lr_at(step: int, total: int, cfg: dict) -> float:
    """Linear warmup for cfg['warmup'] steps, then cosine decay to 10% of the peak at `total`."""
    peak, warm = cfg["lr"], cfg["warmup"]
    if step < warm:
        return peak * (step + 1) / warm
    if cfg.get("schedule") == "constant":
        return peak
    frac = min(1.0, (step - warm) / max(1, total - warm))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


def evaluate_loss(kind: str, model, batches, autocast) -> float:
    """Mean loss over the held-out batches (weighted by predicted tokens), eval mode, no grad."""
    import torch

    model.eval()
    total, count = 0.0, 0
    with torch.no_grad(), autocast():
        for inputs, labels in batches:
            n = labels[:, 1:].numel() if kind == "decoder" else int((labels >= 0).sum())
            total += float(model(input_ids=inputs, labels=labels).loss) * n
            count += n
    model.train()
    return total / max(1, count)


def load_init(model, init: str | Path, log=print) -> None:
    """Copy the weights of the saved checkpoint `init` into `model` (same shapes, or a clear error)."""
    from safetensors.torch import load_file

    path = Path(init) / "model.safetensors"
    if not path.exists():
        raise FileNotFoundError(f"--init: no model.safetensors in {init}")
    own = model.state_dict()
    weights = {k: v.to(own[k].dtype) for k, v in load_file(str(path)).items() if k in own}
    if any(weights[k].shape != own[k].shape for k in weights):
        raise ValueError(f"--init: {init} has other shapes than the preset's model")
    missing = model.load_state_dict(weights, strict=False).missing_keys
    if [k for k in missing if k != "lm_head.weight"]:  # lm_head is tied to wte, not stored
        raise ValueError(f"--init: {init} lacks {missing[0]}")
    log(f"resumed from {init} ({len(weights)} tensors)")


def train_one(kind: str, cfg: dict, data: dict, device: str, seed: int, log=print, init=None) -> tuple:
    """Train one model (from scratch, or resumed from the checkpoint `init`); return (best model, record)."""
    import torch

    # the model, its optimiser and the batches, all seeded; the held-out batches are fixed
    torch.manual_seed(seed)
    model = _start_model(kind, cfg, device, init, log)
    opt = _optimizer(model, cfg)
    gen = torch.Generator().manual_seed(seed + (0 if kind == "decoder" else 1))
    batch_fn = decoder_batch if kind == "decoder" else encoder_batch
    run = _Run(kind, cfg, model, held_out(kind, data["test"], cfg), device.startswith("cuda"), log)
    run.start_counts(init)
    budget = cfg["minutes"] * 60 if cfg["minutes"] else None
    total = cfg["steps"] or UNKNOWN_STEPS  # fixed by the calibration when only a time budget is given
    calib_from, calib_at = 5, min(100, max(10, cfg["warmup"]))
    stopped, step = "schedule", 0
    while step < total:
        # every eval_every steps: a point on the curve, the best weights kept; a plateau ends the run
        if step % cfg["eval_every"] == 0 and run.evaluation(step, total):
            stopped = "plateau"
            break
        # a time budget only: time the steps from calib_from on, then fix the step count that fits
        if step == calib_from:
            run.start_calibration()
        if budget and total == UNKNOWN_STEPS and step > calib_from + 2 and (
                step >= calib_at or run.elapsed() > 0.1 * budget):
            total = run.steps_that_fit(step, calib_from, budget)
        # one step: the scheduled learning rate, a random batch, forward, backward, AdamW
        for group in opt.param_groups:
            group["lr"] = lr_at(step, total, cfg)
        batch = batch_fn(data["train"], gen, cfg)
        run.count(batch_tokens(kind, batch))
        inputs, labels = (batch, batch) if kind == "decoder" else batch
        run.add_train_loss(step, _train_step(model, opt, inputs, labels, run.autocast))
        step += 1
        if budget and run.elapsed() > budget * 1.1:  # a hard stop, should never trigger
            log(f"{kind}: wall-clock budget exceeded at step {step}; stopping")
            stopped = "budget"
            break
    # the curve's last point (its train loss 0.0 when no step ran since the last evaluation), then
    # the best weights back into the model
    run.point(step, run.train_loss(if_none=0.0))
    wall = run.elapsed()
    model.load_state_dict(run.best_state)
    model.token_counts = run.best_counts  # (V,) int64 on the CPU: save_model writes it beside the weights
    record = run.record(step, wall, stopped, init)
    log(f"{kind}: done, {step} steps, best held-out loss {run.best:.4f} at step {run.best_step}, {wall:.0f} s")
    return model, record


def _start_model(kind: str, cfg: dict, device: str, init, log):
    """A freshly initialised model (its weights then replaced by `init`'s when given), on `device`, training."""
    model = build_model(kind, cfg)
    if init:
        load_init(model, init, log)
        model.tie_weights()
    model = model.to(device)
    model.train()
    return model


def _optimizer(model, cfg: dict):
    """AdamW with weight decay 0.1 on the matrices (2 or more dimensions), none on biases and norms."""
    import torch

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=cfg["lr"], betas=(0.9, 0.95), eps=1e-8)


def _train_step(model, opt, inputs, labels, autocast):
    """Forward, backward, gradient norm clipped at 1, one AdamW step; the batch's loss (on the device)."""
    import torch

    with autocast():
        loss = model(input_ids=inputs, labels=labels).loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss


def _sync(cuda: bool) -> None:
    """Wait for queued GPU work, so wall-clock timings are real."""
    if cuda:
        import torch

        torch.cuda.synchronize()


class _Run:
    """One model's training run so far: its clock, the held-out curve, the best checkpoint (lowest
    held-out loss, a CPU copy of its weights) and the train loss since the last evaluation."""

    def __init__(self, kind: str, cfg: dict, model, test: list, cuda: bool, log):
        self.kind, self.cfg, self.model, self.test, self.cuda, self.log = kind, cfg, model, test, cuda, log
        self.tokens_per_step = cfg["batch"] * cfg["seq"]
        self.curve, self.bests = [], []  # bests: the best held-out loss after each evaluation in the loop
        self.best, self.best_step, self.best_state = float("inf"), None, None
        self.counts = self.best_counts = None  # token ids drawn so far, and at the best checkpoint
        self.running, self.n_running = 0.0, 0
        self.eval_s = 0.0  # seconds spent evaluating, left out of the calibration's time per step
        _sync(cuda)
        self.t0 = time.perf_counter()

    def autocast(self):
        """bf16 autocast on CUDA; nothing on CPU."""
        import contextlib

        import torch

        return torch.autocast("cuda", dtype=torch.bfloat16) if self.cuda else contextlib.nullcontext()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def start_counts(self, init) -> None:
        """Count token ids from zero, or from the counts saved beside the checkpoint a resumed run starts from."""
        import numpy as np
        import torch

        size = self.model.get_input_embeddings().weight.shape[0]
        found = Path(init) / COUNTS_FILE if init else None
        start = np.load(found).astype(np.int64) if found and found.is_file() else np.zeros(size, dtype=np.int64)
        device = next(self.model.parameters()).device
        self.counts = torch.as_tensor(start, device=device)

    def count(self, tokens) -> None:
        """Add one batch's token ids (B, T) to the counts (on the device: no wait)."""
        import torch

        self.counts += torch.bincount(tokens.flatten(), minlength=len(self.counts))

    def add_train_loss(self, step: int, loss) -> None:
        """Count a step's loss in the mean train loss; on CUDA every 10th step only (reading it waits for the GPU)."""
        if step % 10 == 0 or not self.cuda:
            self.running += float(loss.detach())
            self.n_running += 1

    def train_loss(self, if_none=None):
        """The mean train loss counted since the last evaluation; `if_none` when none was counted."""
        return self.running / self.n_running if self.n_running else if_none

    def point(self, step: int, train_loss) -> float:
        """The held-out loss now: one point on the curve, and the best checkpoint when it is the lowest yet.
        The train loss starts over."""
        _sync(self.cuda)
        started = time.perf_counter()
        test_loss = evaluate_loss(self.kind, self.model, self.test, self.autocast)
        self.curve.append({"step": step, "tokens": step * self.tokens_per_step, "train_loss": train_loss,
                           "test_loss": test_loss, "elapsed_s": round(self.elapsed(), 2)})
        if test_loss < self.best:
            self.best, self.best_step = test_loss, step
            self.best_state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
            self.best_counts = None if self.counts is None else self.counts.to("cpu", copy=True)
        self.running, self.n_running = 0.0, 0
        self.eval_s += time.perf_counter() - started
        return test_loss

    def evaluation(self, step: int, total: int) -> bool:
        """An evaluation in the loop: the point, logged; True when the run has reached its plateau (the
        best held-out loss fell less than PLATEAU_GAIN over the last `patience` evaluations)."""
        train_loss = self.train_loss()
        test_loss = self.point(step, train_loss)
        rate = step * self.tokens_per_step / max(1e-9, self.elapsed())
        self.log(f"{self.kind} step {step}/{total if total < UNKNOWN_STEPS else '?'} "
                 f"tokens {step * self.tokens_per_step:,} "
                 f"train {train_loss if train_loss is None else round(train_loss, 4)} "
                 f"held-out {test_loss:.4f} ({rate:,.0f} tok/s)")
        self.bests.append(self.best)
        patience, bests = self.cfg.get("patience"), self.bests
        if patience and len(bests) > patience and bests[-1] > bests[-1 - patience] * (1 - PLATEAU_GAIN):
            self.log(f"{self.kind}: the best held-out loss fell less than {PLATEAU_GAIN:.1%} over the last "
                     f"{patience} evaluations; stopping at the plateau")
            return True
        return False

    def start_calibration(self) -> None:
        """Start timing steps (the evaluations from now on are left out)."""
        _sync(self.cuda)
        self.t_calib, self.eval_s_calib = time.perf_counter(), self.eval_s

    def steps_that_fit(self, step: int, since: int, budget: float) -> int:
        """The step count that fills the time budget, from the time per step measured since step `since`
        and the time per evaluation so far (logged)."""
        _sync(self.cuda)
        now = time.perf_counter()
        per_step = (now - self.t_calib - (self.eval_s - self.eval_s_calib)) / (step - since)
        per_eval = self.eval_s / max(1, len(self.curve))
        left = budget - (now - self.t0)
        total = max(step + 1, step + int(0.97 * left / (per_step + per_eval / self.cfg["eval_every"])))
        self.log(f"{self.kind}: {per_step * 1000:.1f} ms/step -> {total} steps fit in {self.cfg['minutes']} min")
        return total

    def record(self, step: int, wall: float, stopped: str, init) -> dict:
        """What training.json keeps of this run."""
        seen = step * self.tokens_per_step
        return {"kind": self.kind, "steps": step, "tokens_seen": seen, "wall_s": round(wall, 1),
                "tokens_per_s": round(seen / wall), "best_test_loss": self.best,
                "best_step": self.best_step, "params": sum(p.numel() for p in self.model.parameters()),
                "stopped": stopped, "curve": self.curve, "init": str(init) if init else None}


def save_model(model, kind: str, out: Path, corpus: Path, cfg: dict | None = None) -> Path:
    """Save `model` in HF format with fp16 weights, its tokenizer files and a generation config."""
    import copy

    import numpy as np
    import torch

    name = (cfg or {}).get("name") if kind == "decoder" else None  # a sibling preset names its decoder
    path = out / (name or ("course-gpt2" if kind == "decoder" else "course-roberta"))
    half = copy.deepcopy(model).to("cpu", dtype=torch.float16).eval()
    if kind == "decoder":
        from transformers import GenerationConfig

        half.generation_config = GenerationConfig(bos_token_id=ct.EOT, eos_token_id=ct.EOT,
                                                  pad_token_id=ct.EOT, do_sample=True, top_k=40,
                                                  temperature=0.8, max_new_tokens=60)
    half.save_pretrained(path)
    counts = getattr(model, "token_counts", None)
    if counts is not None:
        np.save(path / COUNTS_FILE, np.asarray(counts, dtype=np.int64).astype(np.uint32))
    tok_dir = corpus / "tokenizers" / ("gpt2" if kind == "decoder" else "roberta")
    for f in tok_dir.iterdir():
        shutil.copy(f, path / f.name)
    return path


def load_data(corpus: Path, device: str) -> dict:
    """The train and test token streams as int64 tensors on `device`."""
    import numpy as np
    import torch

    data = {}
    for split in ("train", "test"):
        arr = np.load(corpus / "tokens" / f"{split}.npy").astype(np.int64)
        data[split] = torch.from_numpy(arr).to(device)
    return data


def run(preset: str, corpus: str | Path, out: str | Path, device: str = "auto", seed: int = 0,
        minutes: float | None = None, steps: int | None = None, models=MODELS, evaluate: bool = True,
        eval_windows: int | None = None, log=print, init: str | None = None) -> dict:
    """Train the chosen models, save them under `out`, evaluate; return the results written."""
    import numpy as np
    import torch

    corpus, out = Path(corpus), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = dict(PRESETS[preset])
    if minutes is not None:
        cfg["minutes"], cfg["steps"] = minutes, None
    if steps is not None:
        cfg["steps"] = steps
    device = pick_device(device)
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(seed)
    np.random.seed(seed)
    data = load_data(corpus, device)
    log(f"device {device}, preset {preset}, train {len(data['train']):,} tokens, "
        f"test {len(data['test']):,} tokens, config {json.dumps(cfg)}")
    training = {"preset": preset, "config": cfg, "seed": seed, "device": device,
                "torch": torch.__version__, "init": init}
    if init and len(models) != 1:
        raise ValueError("--init resumes one model: pass --models decoder or --models encoder")
    for kind in models:
        model, record = train_one(kind, cfg, data, device, seed, log, init)
        path = save_model(model, kind, out, corpus, cfg)
        record["saved"] = str(path)
        record["saved_bytes"] = sum(f.stat().st_size for f in path.iterdir())
        training[kind] = record
        del model
    (out / "training.json").write_text(json.dumps(training, indent=1) + "\n")
    results = {"training": training}
    if evaluate:
        from lab.course import evaluate as course_eval

        results = course_eval.run(out, corpus, device=device, training=training, limit=eval_windows,
                                  log=log)
    return results


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The training command's options (shared by `python -m lab train` and `python -m lab.course.train`)."""
    p.add_argument("--preset", choices=tuple(PRESETS), default="cpu", help="model size and budget")
    p.add_argument("--corpus", default="corpus", help="directory written by `python -m lab corpus`")
    p.add_argument("--out", default="runs/latest", help="where models, results and PNGs go")
    p.add_argument("--device", default="auto", help="auto (cuda if available), cpu, cuda, cuda:1 ...")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--minutes", type=float, default=None, help="wall-clock budget per model")
    p.add_argument("--steps", type=int, default=None, help="fixed step count (overrides --minutes)")
    p.add_argument("--models", default="decoder,encoder", help="comma-separated: decoder,encoder")
    p.add_argument("--no-eval", action="store_true", help="skip the evaluation after training")
    p.add_argument("--eval-windows", type=int, default=None,
                   help="evaluate on at most this many held-out windows per stream (default: all)")
    p.add_argument("--init", default=None,
                   help="resume from this saved checkpoint (same preset shapes; one model at a time)")


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m lab.course.train` (works without the lab CLI's other commands)."""
    p = argparse.ArgumentParser(prog="python -m lab.course.train", description=__doc__.splitlines()[0])
    add_arguments(p)
    a = p.parse_args(argv)
    models = tuple(m for m in a.models.split(",") if m)
    if any(m not in MODELS for m in models):
        p.error(f"--models: choose from {', '.join(MODELS)}")
    run(a.preset, a.corpus, a.out, a.device, a.seed, a.minutes, a.steps, models, not a.no_eval,
        a.eval_windows, log=lambda s: print(s, flush=True), init=a.init)
    return 0


if __name__ == "__main__":
    sys.exit(main())
