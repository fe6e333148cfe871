"""lab.attention against transformers' own output_attentions, the mask invariants, a shared model."""

import copy
import io
import threading
import weakref

import numpy as np
import pytest
import torch

from lab import attention as lab
from lab import text as lab_text
from lab.encodings import encoding
from lab.models import load
from lab.tokens import shown
from tests.overlap import InFlight, forwards_in_flight

TEXT = "The trophy didn't fit in the suitcase because it was too big. It was, it was."


@pytest.fixture(scope="module")
def models(tiny_model_dirs):
    """{arch: Loaded} for the tiny random gpt2 / openai-gpt / roberta, loaded the app's way."""
    return {arch: load(str(path)) for arch, path in tiny_model_dirs.items()}


def reference(model, ids, **kw) -> np.ndarray:
    """transformers' own attentions for one sequence: [layer, head, query, key]."""
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True, **kw)
    return torch.stack(out.attentions, dim=1)[0].numpy()


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt", "roberta"])
def test_attention_equals_transformers(models, arch):
    m = models[arch]
    ids = lab_text.encode(m.tokenizer, TEXT)
    att = lab.attention(m.model, ids)
    ref = reference(m.model, ids)
    assert att.dtype == np.float32
    assert att.shape == (m.n_layer, m.n_head, len(ids), len(ids))
    np.testing.assert_allclose(att, ref, rtol=0, atol=1e-6)


def test_no_mask_equals_transformers_is_causal_false_on_a_private_copy(models):
    """transformers' own way to drop the mask (is_causal=False), run on a throwaway copy."""
    m = models["gpt2"]
    ids = lab_text.encode(m.tokenizer, TEXT)
    private = copy.deepcopy(m.model)  # is_causal= writes the config: never on the shared model
    ref = reference(private, ids, is_causal=False)
    assert np.triu(ref[0, 0], 1).max() > 0  # the oracle really is unmasked
    np.testing.assert_allclose(lab.attention(m.model, ids, causal=False), ref, rtol=0, atol=1e-6)


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt"])
def test_mask_invariants(models, arch):
    m = models[arch]
    ids = lab_text.encode(m.tokenizer, TEXT)
    att = lab.attention(m.model, ids)
    upper = np.triu(np.ones((len(ids), len(ids)), bool), 1)
    assert (att[..., upper] == 0.0).all()  # exactly zero, not nearly
    np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-5)
    if arch == "gpt2":
        free = lab.attention(m.model, ids, causal=False)
        assert (free[..., upper] > 0).all()
        np.testing.assert_allclose(free.sum(-1), 1.0, atol=1e-5)


def test_gpt1_refuses_to_run_without_its_mask(models):
    m = models["openai-gpt"]
    before = m.model.config.to_json_string()
    with pytest.raises(lab.MaskUnsupported, match="never does"):
        lab.attention(m.model, lab_text.encode(m.tokenizer, TEXT), causal=False)
    assert m.model.config.to_json_string() == before


def test_encoder_sees_both_ways(models):
    m = models["roberta"]
    ids = lab_text.encode(m.tokenizer, TEXT)
    assert m.tokenizer.convert_ids_to_tokens([ids[0], ids[-1]]) == ["<s>", "</s>"]
    att = lab.attention(m.model, ids)
    assert (att[..., np.triu(np.ones((len(ids),) * 2, bool), 1)] > 0).all()


def test_shared_model_unchanged_after_a_no_mask_run(models):
    m = models["gpt2"]
    ids = lab_text.encode(m.tokenizer, TEXT)
    config = m.model.config.to_json_string()
    with torch.no_grad():
        logits = m.model(torch.tensor([ids])).logits.clone()
    masked = lab.attention(m.model, ids)
    lab.attention(m.model, ids, causal=False)
    assert m.model.config.to_json_string() == config
    with torch.no_grad():
        assert torch.equal(m.model(torch.tensor([ids])).logits, logits)
    assert np.array_equal(lab.attention(m.model, ids), masked)


def test_concurrent_masked_and_unmasked_calls_never_leak(models):
    """Threads with and without the mask on one shared model: every call sees what it asked for."""
    m = models["gpt2"]
    config = m.model.config.to_json_string()
    texts = [TEXT[: n] for n in range(12, len(TEXT), 7)]
    failures, counts = [], {True: 0, False: 0}
    lock, start, calls = threading.Lock(), threading.Barrier(4, timeout=60), InFlight()

    def worker(causal: bool):
        start.wait()  # all four begin together
        for i in range(60):
            ids = lab_text.encode(m.tokenizer, texts[i % len(texts)])
            with calls:
                upper = lab.attention(m.model, ids, causal=causal)[..., np.triu(np.ones((len(ids),) * 2, bool), 1)]
            ok = (upper == 0).all() if causal else (upper != 0).all()
            with lock:
                counts[causal] += 1
                if not ok:
                    failures.append((causal, i))

    threads = [threading.Thread(target=worker, args=(c,)) for c in (True, False, True, False)]
    with forwards_in_flight() as passes:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert counts == {True: 120, False: 120}
    assert failures == []
    assert calls.peak > 1 and passes.peak > 1 and passes.calls == 240  # the calls really ran at once
    assert m.model.config.to_json_string() == config


def test_token_texts_match_tiktoken_bytes(models):
    """Each token's text is its bytes (tiktoken's GPT-2), a split UTF-8 character shown as \\xNN."""
    m = models["gpt2"]
    text = "Não coube: ação, canção, ônibus 🏆"
    ids = lab_text.encode(m.tokenizer, text)
    assert ids == encoding("gpt2").encode_ordinary(text)
    expected = [shown(encoding("gpt2").decode_single_token_bytes(i)) for i in ids]
    assert lab_text.token_texts(m.tokenizer, ids) == expected
    assert any("\\x" in t for t in expected)  # the emoji is split across tokens


def test_labels_keep_repeated_tokens_apart(models):
    m = models["gpt2"]
    texts = lab_text.token_texts(m.tokenizer, lab_text.encode(m.tokenizer, "it was it was\nit it"))
    labels = lab_text.labels(texts)
    assert texts.count(" it") == 2 and len(set(labels)) == len(labels)
    assert labels[:3] == ["0 it", "1 ␣was", "2 ␣it"] and labels[4] == "4 ↵"


def test_split_arithmetic_read_from_the_config(models):
    m = models["gpt2"]
    s = lab.split(m.model, 7)
    cfg = m.model.config
    assert (s["n_embd"], s["n_head"], s["n_layer"]) == (cfg.n_embd, cfg.n_head, cfg.n_layer)
    assert s["n_head"] * s["head_dim"] == s["n_embd"]
    assert s["q"] == s["k"] == s["v"] == [1, cfg.n_head, 7, cfg.n_embd // cfg.n_head]
    assert s["qkv_projection"] == list(m.model.transformer.h[0].attn.c_attn.weight.shape)


def test_head_summary_on_known_patterns():
    t = 5
    prev = np.zeros((t, t), np.float32)
    prev[0, 0] = 1
    prev[np.arange(1, t), np.arange(t - 1)] = 1  # a previous-token head
    uniform = np.tril(np.ones((t, t), np.float32))
    uniform /= uniform.sum(-1, keepdims=True)  # a causal averaging head
    rows = lab.head_summary(np.stack([prev, uniform])[None])
    assert rows[0] == {"layer": 0, "head": 0, "entropy": 0.0, "previous": 1.0, "first": 0.25, "self": 0.0}
    q = np.arange(1, t)
    assert rows[1]["entropy"] == pytest.approx(np.mean(np.log2(q + 1)))
    assert rows[1]["previous"] == rows[1]["first"] == rows[1]["self"] == pytest.approx(np.mean(1 / (q + 1)))


def test_empty_and_too_long_text(models):
    m = models["gpt2"]
    with pytest.raises(ValueError, match="empty"):
        lab_text.encode(m.tokenizer, "  ")
    with pytest.raises(ValueError, match="context"):
        lab.attention(m.model, [1] * (m.context + 1))


def test_layers_are_let_go_one_by_one(models, monkeypatch):
    """attention_by_layer never holds every layer: by the time layer i arrives, layers < i are freed."""
    m = models["gpt2"]
    refs, real_run = [], lab.run

    def spy(*args, **kwargs):
        out = real_run(*args, **kwargs)
        refs.extend(weakref.ref(tensor) for tensor in out.attentions)
        return out

    monkeypatch.setattr(lab, "run", spy)
    ids = lab_text.encode(m.tokenizer, TEXT)
    layers = []
    for i, layer in enumerate(lab.attention_by_layer(m.model, ids)):
        assert [r() is None for r in refs[:i]] == [True] * i
        layers.append(layer.copy())
    assert len(refs) == m.n_layer and len(layers) == m.n_layer
    np.testing.assert_array_equal(np.stack(layers), lab.attention(m.model, ids))


def test_max_tokens_keeps_the_weights_under_the_budget():
    for n_layer, n_head in ((12, 12), (48, 25), (2, 4)):
        n = lab.max_tokens(n_layer, n_head, 300_000_000)
        assert n_layer * n_head * n * n * 4 <= 300_000_000 < n_layer * n_head * (n + 1) ** 2 * 4
    assert lab.max_tokens(12, 12, 300_000_000) == 721


@pytest.mark.parametrize("t", [5, 15, 40, 56, 64, 200])
def test_overview_shows_the_last_token(t):
    """One strong weight at (T-1, T-1): the bottom-right pixel of the head's tile is dark."""
    from PIL import Image

    from viz import attention as viz

    att = np.full((1, 2, t, t), 0.01, np.float32)
    att[0, 0, t - 1, t - 1] = 1.0
    att[0, 1, 0, 0] = 1.0  # and the first token in the next head
    cell, margin, gap = viz.OVERVIEW_CELL, 28, 4
    img = np.asarray(Image.open(io.BytesIO(viz.overview_png(att))).convert("RGB")).astype(int)
    last = margin + cell - 1
    first = margin + cell + gap
    assert img[last, last].sum() < 200  # dark blue, not white
    assert img[margin, first].sum() < 200
    assert img[margin, margin].sum() > 600 and img[margin, first + cell - 1].sum() > 600  # the rest stays light
