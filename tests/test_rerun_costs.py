"""What a warm rerun no longer pays for (issue 50; docs/hosting.md, "Where a warm rerun's CPU goes"): each test
fails on the code before its cut."""

from __future__ import annotations

import pytest

from lab.detect import evaluation
from tests.pages import open_page


def test_the_all_heads_overview_is_sent_as_made_not_reencoded(monkeypatch, course_standins):
    """Streamlit re-encodes an RGB PNG as a JPEG on every rerun unless told it is a PNG: once the overview is
    computed (the first run), a rerun never runs PIL's encoder."""
    from PIL import Image

    at = open_page("app_pages/attention.py")
    assert not at.exception

    def refuse(*args, **kwargs):
        raise AssertionError("an image was encoded during a warm rerun")

    monkeypatch.setattr(Image.Image, "save", refuse)
    at.run()
    assert not at.exception, at.exception


def test_a_models_fingerprint_is_computed_once_and_is_its_weights(tiny_model_dirs):
    import hashlib

    from lab.models import load

    m = load(str(tiny_model_dirs["gpt2"]))
    rows = m.model.get_input_embeddings().weight[:64].detach().float().contiguous().numpy()
    first = evaluation.weights_id(m)
    assert first == hashlib.sha256(rows.tobytes() + str(rows.shape).encode()).hexdigest()[:16]
    embeddings = type(m.model).get_input_embeddings
    try:
        type(m.model).get_input_embeddings = lambda self: pytest.fail("the weights were read again")
        assert evaluation.weights_id(m) == first
    finally:
        type(m.model).get_input_embeddings = embeddings
    import torch

    other = load(str(tiny_model_dirs["gpt2"]))  # a fresh object of its own (not the app's shared cache)
    assert evaluation.weights_id(other) == first
    retrained = load(str(tiny_model_dirs["gpt2"]))
    with torch.no_grad():
        retrained.model.get_input_embeddings().weight[0, 0] += 1.0
    assert evaluation.weights_id(retrained) != first
