"""lab.sampling against transformers: its warpers (property-based), `generate` token for token, threads."""

import math
import threading

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from lab import sampling
from lab.models import load
from tests.overlap import forwards_in_flight

PROMPT = "The trophy didn't fit in the suitcase"


def transformers_probs(logits: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """What generate(do_sample=True) samples from: its warpers, built under its own conditions, then softmax."""
    warpers = LogitsProcessorList()
    if temperature != 1.0:
        warpers.append(TemperatureLogitsWarper(temperature))
    if top_k != 0:
        warpers.append(TopKLogitsWarper(top_k=top_k, min_tokens_to_keep=1))
    if top_p < 1.0:
        warpers.append(TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=1))
    return warpers(None, logits.clone()).softmax(-1)


@st.composite
def cases(draw):
    """Random logits (ties and wide ranges included) and settings, every filter on or off."""
    v = draw(st.integers(1, 300))
    values = st.floats(-30, 30, allow_nan=False, width=32) | st.sampled_from([0.0, 1.0, -1.0])
    logits = torch.tensor([draw(st.lists(values, min_size=v, max_size=v))], dtype=torch.float32)
    temperature = draw(st.sampled_from([1.0]) | st.floats(0.05, 5.0))
    top_k = draw(st.sampled_from([0]) | st.integers(1, v + 3))
    top_p = draw(st.sampled_from([1.0]) | st.floats(0.01, 1.0, exclude_max=True))
    return logits, temperature, top_k, top_p


# p = 0.4, 0.3, 0.2, 0.1 with top-k 2, top-p 0.5: top-k first renormalises to 4/7, 3/7 and top-p keeps one token;
# top-p first keeps two (0.4 + 0.3 reaches 0.5) and top-k keeps both. generate applies top-k first.
ORDER_MATTERS = (torch.log(torch.tensor([[0.4, 0.3, 0.2, 0.1]])), 1.0, 2, 0.5)


@settings(max_examples=400, deadline=None)
@given(cases())
@example(ORDER_MATTERS)
@example((torch.tensor([[2.0, 2.0, 1.0, 0.0, -1.0, 1.0]]), 1.5, 3, 0.6))  # ties, temperature: 2 kept, 3 if p first
def test_filters_equal_transformers_warpers(case):
    logits, temperature, top_k, top_p = case
    mine = sampling.next_token_distribution(logits, temperature, top_k, top_p)
    ref = transformers_probs(logits, temperature, top_k, top_p)
    np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=0, atol=1e-6)
    assert ((mine > 0) == (ref > 0)).all()  # the same survivors, not just close numbers
    assert abs(float(mine.sum()) - 1) < 1e-5
    step = sampling.record(logits, temperature, top_k, top_p, top=logits.shape[-1])
    assert step["kept"] == int((ref > 0).sum())
    assert abs(sum(step["candidates"]["p_filtered"]) - 1) < 1e-5  # survivors sum to 1
    ids = step["candidates"]["id"]
    np.testing.assert_allclose(step["candidates"]["p_filtered"], ref[0, ids].numpy(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(step["candidates"]["p_raw"], logits.softmax(-1)[0, ids].numpy(), rtol=0, atol=1e-6)


def test_top_k_comes_before_top_p_as_in_generate():
    """A fixed case where the order changes the answer (transformers' own warpers in both orders)."""
    logits, temperature, top_k, top_p = ORDER_MATTERS
    k_then_p = LogitsProcessorList([TopKLogitsWarper(top_k), TopPLogitsWarper(top_p)])(None, logits.clone()).softmax(-1)
    p_then_k = LogitsProcessorList([TopPLogitsWarper(top_p), TopKLogitsWarper(top_k)])(None, logits.clone()).softmax(-1)
    assert (k_then_p > 0).sum() == 1 and (p_then_k > 0).sum() == 2  # the case tells the two orders apart
    mine = sampling.next_token_distribution(logits, temperature, top_k, top_p)
    np.testing.assert_allclose(mine.numpy(), k_then_p.numpy(), rtol=0, atol=1e-6)
    assert sampling.record(logits, temperature, top_k, top_p, top=4)["kept"] == 1


@settings(max_examples=100, deadline=None)
@given(cases())
def test_temperature_zero_is_argmax(case):
    logits, _, top_k, top_p = case
    p = sampling.next_token_distribution(logits, 0, top_k, top_p)
    assert float(p.sum()) == 1.0 and int(p.argmax()) == int(np.argmax(logits.numpy()))


def test_entropies_and_stage_columns_against_numpy():
    logits = torch.tensor([[3.0, 2.0, 1.0, 0.5, 0.0, -1.0]])
    step = sampling.record(logits, 0.5, 4, 0.8, top=6)
    raw = np.exp(logits.numpy()[0]) / np.exp(logits.numpy()[0]).sum()
    temp = np.exp(logits.numpy()[0] / 0.5) / np.exp(logits.numpy()[0] / 0.5).sum()
    topk = np.where(np.arange(6) < 4, temp, 0) / temp[:4].sum()
    assert step["entropy_raw"] == pytest.approx(-(raw * np.log2(raw)).sum(), abs=1e-5)
    np.testing.assert_allclose(step["candidates"]["p_temp"], temp, atol=1e-6)
    np.testing.assert_allclose(step["candidates"]["p_topk"], topk, atol=1e-6)
    assert step["kept_topk"] == 4
    kept = np.cumsum(topk) - topk < 0.8  # the smallest prefix reaching 0.8
    final = np.where(kept, topk, 0) / topk[kept].sum()
    np.testing.assert_allclose(step["candidates"]["p_filtered"], final, atol=1e-6)
    assert step["entropy"] == pytest.approx(-(final[kept] * np.log2(final[kept])).sum(), abs=1e-5)


@pytest.mark.parametrize("bad", [dict(temperature=-0.1), dict(temperature=math.nan), dict(temperature=math.inf),
                                 dict(top_k=-1), dict(top_k=2.5), dict(top_p=0.0), dict(top_p=1.01),
                                 dict(top_p=math.nan)])
def test_bad_settings_are_refused(bad):
    kw = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, **bad}
    with pytest.raises(sampling.SamplingError) as e:
        sampling.next_token_distribution(torch.zeros(5), **kw)
    assert e.value.reason == next(iter(bad))


def generate_reference(model, ids, n, temperature, top_k, top_p, seed):
    """transformers' generate with the same settings, seeded through the process RNG (the test's own)."""
    torch.manual_seed(seed)
    out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=temperature > 0,
                         temperature=temperature if temperature > 0 else None, top_k=top_k, top_p=top_p,
                         pad_token_id=0, eos_token_id=None, return_dict_in_generate=True, output_scores=True)
    return out.sequences[0, len(ids):].tolist(), [s.softmax(-1)[0] for s in out.scores]


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt"])
@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 0, 1.0), (0.7, 40, 0.9), (1.5, 5, 1.0), (0, 0, 1.0)])
def test_generation_is_generates_token_for_token(tiny_model_dirs, arch, temperature, top_k, top_p):
    m = load(str(tiny_model_dirs[arch]))
    ids = m.tokenizer(PROMPT)["input_ids"]
    assert sampling.uses_cache(m.model) == (arch == "gpt2")  # GPT-1 re-reads the sequence each step
    lengths, kept = [], []  # tokens fed to each forward call: with the cache, the prompt once and then 1 at a time

    def seen(module, args, kwargs):
        lengths.append(kwargs["input_ids"].shape[1])
        kept.append(kwargs.get("logits_to_keep"))

    m.model.register_forward_pre_hook(seen, with_kwargs=True)
    for seed in (0, 7):
        lengths.clear()
        kept.clear()
        steps = list(sampling.steps(m.model, ids, 12, temperature, top_k, top_p, seed, stop_at_eos=False))
        n = len(ids)
        assert lengths == ([n] + [1] * 11 if arch == "gpt2" else list(range(n, n + 12)))
        assert kept == [1] * 12  # only the last position goes through the LM head, as in generate
        tokens, probs = generate_reference(m.model, ids, 12, temperature, top_k, top_p, seed)
        assert [s["id"] for s in steps] == tokens
        if temperature > 0:  # generate's scores are the warped logits each token was drawn from
            for s, p in zip(steps, probs, strict=True):
                np.testing.assert_allclose(s["candidates"]["p_filtered"], p[s["candidates"]["id"]].numpy(), atol=1e-6)
                assert s["p"] == pytest.approx(float(p[s["id"]]), abs=1e-6)


def test_same_seed_same_text_and_the_global_rng_untouched(tiny_model_dirs):
    m = load(str(tiny_model_dirs["gpt2"]))
    state = torch.get_rng_state()
    a = sampling.sample(m.model, m.tokenizer, PROMPT, 10, 1.0, 0, 1.0, seed=3)
    torch.manual_seed(12345)  # whatever the process RNG holds, the text stays the seed's
    b = sampling.sample(m.model, m.tokenizer, PROMPT, 10, 1.0, 0, 1.0, seed=3)
    assert a["text"] == b["text"] and a["tokens"] == b["tokens"]
    torch.set_rng_state(state)
    sampling.sample(m.model, m.tokenizer, PROMPT, 10, 1.0, 0, 1.0, seed=4)
    assert torch.equal(torch.get_rng_state(), state)  # a per-call generator: the process RNG is never drawn from
    # A random 50k-token model is nearly uniform: ten equal draws from two seeds would be a ~1e-47 event.
    c = sampling.sample(m.model, m.tokenizer, PROMPT, 10, 1.0, 0, 1.0, seed=4)
    assert [t["id"] for t in a["tokens"]] != [t["id"] for t in c["tokens"]]


def test_two_threads_on_one_model_each_get_their_own_text(tiny_model_dirs):
    m = load(str(tiny_model_dirs["gpt2"]))
    ids = m.tokenizer(PROMPT)["input_ids"]
    alone = {seed: [s["id"] for s in sampling.steps(m.model, ids, 16, 1.0, 0, 0.95, seed)] for seed in (1, 2)}
    assert alone[1] != alone[2]
    barrier, got, errors = threading.Barrier(2, timeout=60), {}, []

    def run(seed):
        try:
            got[seed] = []
            for step in sampling.steps(m.model, ids, 16, 1.0, 0, 0.95, seed):
                got[seed].append(step["id"])
                barrier.wait()  # both generators are mid-way at once: step i of one, step i of the other
        except Exception as e:  # reported below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(seed,)) for seed in (1, 2)]
    inside = threading.Barrier(2, timeout=60)  # each forward pass waits there for the other thread's
    with forwards_in_flight(rendezvous=inside) as passes:
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
    assert not errors and barrier.n_waiting == 0 and not inside.broken
    assert passes.peak == 2 and passes.calls == 32  # 16 steps each, every pass beside one of the other thread
    assert got == alone


def test_generation_stops_at_end_of_text_and_records_compactly(tiny_model_dirs):
    m = load(str(tiny_model_dirs["gpt2"]))
    ids = m.tokenizer(PROMPT)["input_ids"]
    first = next(sampling.steps(m.model, ids, 5, 1.0, 0, 1.0, seed=0))
    assert set(first["candidates"]) == {"id", "p_raw", "p_temp", "p_topk", "p_filtered"}
    assert all(len(v) == sampling.TOP for v in first["candidates"].values())
    assert first["vocab"] == m.model.config.vocab_size and "p" in first and first["rank"] >= 0
    # A private copy whose end-of-text token is what greedy picks next: generation stops right after it.
    own = load(str(tiny_model_dirs["gpt2"]))
    favourite = int(own.model(torch.tensor([ids])).logits[0, -1].argmax())
    own.model.generation_config.eos_token_id = favourite
    assert [s["id"] for s in sampling.steps(own.model, ids, 5, 0, 0, 1.0, 0)] == [favourite]
    assert len(list(sampling.steps(own.model, ids, 5, 0, 0, 1.0, 0, stop_at_eos=False))) == 5


@pytest.mark.parametrize("call,reason", [
    (lambda m, ids: list(sampling.steps(m.model, ids, 0, 1.0, 0, 1.0, 0)), "max_new_tokens"),
    (lambda m, ids: list(sampling.steps(m.model, ids, 64, 1.0, 0, 1.0, 0)), "too_long"),
    (lambda m, ids: list(sampling.steps(m.model, [], 3, 1.0, 0, 1.0, 0)), "empty_prompt"),
])
def test_bad_generation_input(tiny_model_dirs, call, reason):
    m = load(str(tiny_model_dirs["gpt2"]))
    with pytest.raises(sampling.SamplingError) as e:
        call(m, m.tokenizer(PROMPT)["input_ids"])
    assert e.value.reason == reason


def test_an_encoder_cannot_sample(tiny_model_dirs):
    m = load(str(tiny_model_dirs["roberta"]))
    with pytest.raises(sampling.SamplingError) as e:
        next(sampling.steps(m.model, m.tokenizer(PROMPT)["input_ids"], 3, 1.0, 0, 1.0, 0))
    assert e.value.reason == "encoder"
