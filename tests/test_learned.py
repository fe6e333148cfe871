"""lab.learned and the trainer's token counts: counts against an independent reconstruction of the windows,
the weights-only indicator on planted rows, the shipped counts against the run's record."""

import json

import numpy as np
import torch

from lab import learned
from lab.course import tokenizer as ct
from tests.test_train import tiny_corpus  # noqa: F401  (the fixture)


def _windows(stream: np.ndarray, gen, cfg: dict, kind: str) -> np.ndarray:
    """One step's windows rebuilt with numpy slicing, drawing from `gen` what the trainer draws."""
    B, T = cfg["batch"], cfg["seq"]
    body = T if kind == "decoder" else T - 2
    starts = torch.randint(0, len(stream) - T, (B,), generator=gen).numpy()
    rows = np.stack([stream[s:s + body] for s in starts]).astype(np.int64)
    if kind == "decoder":
        n = int(round(B * cfg["repeat_frac"]))
        rows[:n] = np.concatenate([rows[:n, :T // 2], rows[:n, :T // 2]], axis=1)[:, :T]
        return rows
    for _ in range(2):
        torch.rand((B, T), generator=gen)  # the mask's two draws and its random tokens
    torch.randint(ct.ENC_OFFSET, ct.ENC_MASK, (B, T), generator=gen)
    enc = np.where(rows == ct.EOT, ct.ENC_EOS, rows + ct.ENC_OFFSET)
    return np.hstack([np.full((B, 1), ct.ENC_BOS), enc, np.full((B, 1), ct.ENC_EOS)])


def test_training_writes_the_counts_of_the_windows_it_drew(tiny_corpus, tmp_path):  # noqa: F811
    from lab.course import train

    out = tmp_path / "run"
    train.run("smoke", tiny_corpus, out, device="cpu", steps=40, evaluate=False, log=lambda s: None)
    stream = np.load(tiny_corpus / "tokens" / "train.npy").astype(np.int64)
    record = json.loads((out / "training.json").read_text())
    cfg = train.PRESETS["smoke"]
    runs = (("decoder", "course-gpt2", ct.VOCAB_SIZE), ("encoder", "course-roberta", ct.ENC_VOCAB_SIZE))
    for kind, name, size in runs:
        saved = np.load(out / name / "token_counts.npy")
        gen = torch.Generator().manual_seed(0 + (0 if kind == "decoder" else 1))
        steps = record[kind]["best_step"]
        want = np.zeros(size, dtype=np.int64)
        for _ in range(steps):
            want += np.bincount(_windows(stream, gen, cfg, kind).ravel(), minlength=size)
        assert steps > 0 and saved.sum() == steps * cfg["batch"] * cfg["seq"]
        np.testing.assert_array_equal(saved, want)
        replay = train.replay_counts(kind, cfg, torch.from_numpy(stream), 0, steps).numpy()
        np.testing.assert_array_equal(replay, want)


def test_indicator_flags_rows_left_at_init_and_nothing_else():
    rng = np.random.default_rng(0)
    V, C = 2000, 256  # as wide as the course models (in a few dimensions random cosines spread too far)
    w = rng.normal(0, 1.0, (V, C))  # trained rows: spread out, most along one axis (the first component)
    w[:, 0] *= 6
    drift = rng.normal(0, 1.0, C)
    untrained = [5, 77, 300, 599]
    reference = [10, 11, 12]
    for i in untrained + reference:  # rows that saw no text: pushed together along one drift, little else
        w[i] = drift + rng.normal(0, 0.05, C)
    score = learned.indicator(w, reference)
    ids, _ = learned.flagged(score)
    assert set(ids) == set(untrained) | set(reference)


def test_shipped_counts_add_up_to_the_tokens_each_run_saw():
    for name, seen in (("course-gpt2", 181_043_200), ("course-roberta", 194_969_600)):
        counts = np.load(f"models/{name}/token_counts.npy")
        assert abs(int(counts.sum()) - seen) / seen < 1e-4
    gpt2 = np.load("models/course-gpt2/token_counts.npy")
    assert gpt2[ct.EOT] > 0 and (gpt2 == 0).sum() > 100  # tokens the Debian text never contains


def test_the_indicator_equals_the_papers_recipe_written_out_with_copies():
    """lab.learned.indicator computes without copying the matrix; the recipe it stands for, written plainly in
    float64 (centre, first principal component by SVD, remove it from every row, cosine to the reference mean)."""
    from lab.learned import indicator

    rng = np.random.default_rng(0)
    x = (rng.normal(size=(3000, 48)) + rng.normal(size=48) * 3).astype(np.float32)  # a mean and a main direction
    ref = [5, 17, 99, 2500]
    y = x.astype(np.float64)
    pc = np.linalg.svd(y - y.mean(0), full_matrices=False)[2][0]
    z = y - np.outer(y @ pc, pc)
    r = z[ref].mean(0)
    plain = (z @ r) / (np.linalg.norm(z, axis=1) * np.linalg.norm(r))
    np.testing.assert_allclose(indicator(x, ref), plain, atol=1e-4)
