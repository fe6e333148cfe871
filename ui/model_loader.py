"""The app's one shared model cache (the only Streamlit resource cache in the code): every page gets its model here.

`get_model(name_or_path)` goes through one process-wide `ModelCache` (one load per model however
many sessions ask; a memory budget with LRU eviction). `current_model()` is the model chosen in the
sidebar picker: downloaded with a progress bar when needed, and when it cannot be had (offline, hub
unreachable, over the memory budget) a plain message and the offline course model instead.
"""

from __future__ import annotations

import functools
import os
import threading

import streamlit as st

from lab import models
from lab.models import DEFAULT_OFFLINE, Loaded, ModelUnavailable, hosting, hub, registry
from lab.models.budget import ModelCache, ModelTooLarge
from lab.models.default import default_model
from ui import messages, url_state
from ui.i18n import model_label, size, t

MODEL_KEY = url_state.MODEL.name  # st.session_state key of the sidebar picker, and its query parameter
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")  # set by whoever runs the app: theirs wins


def leave_a_core() -> int:
    """Torch's intra-op threads for the app: one fewer than torch takes by default (its physical cores), at
    least one, unless OMP_NUM_THREADS or MKL_NUM_THREADS is set. The model shares the machine with the
    Streamlit server and, on a laptop, the reader's browser; with every core in one forward pass, the pass
    and the browser drawing its output stall each other (docs/sampling.md measures it:
    lab/benchmarks/pages.py). Returns the thread count now in force."""
    import torch

    if (threads := app_threads()) is not None:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def app_threads() -> int | None:
    """The thread count leave_a_core gives torch: one fewer than torch's own, at least one; None when
    OMP_NUM_THREADS or MKL_NUM_THREADS is set (torch follows them). Changes nothing. A command run beside the app
    reproduces its float32 rounding to the digit only with this count (tests/test_reproduce.py)."""
    if any(os.environ.get(name) for name in THREAD_ENV):
        return None
    return max(1, _torch_default() - 1)


@functools.cache
def _torch_default() -> int:
    """Torch's own thread count, read once: a second call (the cache cleared) must not take a second core."""
    import torch

    return torch.get_num_threads()


@st.cache_resource(show_spinner=False)
def model_cache() -> ModelCache:
    """The one ModelCache of this process, shared by every session (created once: torch's threads set then)."""
    leave_a_core()
    return ModelCache()


def get_model(name_or_path: str) -> Loaded:
    """The loaded model for a registry name or local HF directory, through the shared cache."""
    hosting.check_offered(name_or_path)  # a hosted demo loads only the models it offers
    return model_cache().get(models.canonical(name_or_path))


def chosen_name() -> str:
    """The registry name picked in the sidebar (session, then URL), else the default (gpt2 where it is here)."""
    name = st.session_state.get(MODEL_KEY) or url_state.read(url_state.MODEL, default=None) or default_model()
    return name if name in registry.REGISTRY else DEFAULT_OFFLINE


def _download_with_progress(name: str) -> None:
    """Download a hub model not yet cached, showing bytes so far against its known size."""
    info = registry.info(name)
    if info.hub_id is None or hub.is_available(name):
        return
    model_cache().check_fits(name)  # refuse before downloading gigabytes that could never load
    hub.check_online(name)  # offline or hub silent: say so now, no download box
    total = info.download_bytes
    outcome: dict[str, BaseException] = {}

    def work():
        try:
            hub.download(name)
        except BaseException as e:  # handed to the script thread below
            outcome["error"] = e

    worker = threading.Thread(target=work, daemon=True)  # keeps going if the reader leaves the page
    worker.start()
    label = model_label(name)
    with st.status(t(f"Downloading {label} ({size(total)})…", f"Baixando {label} ({size(total)})…"),
                   expanded=True) as box:
        bar = st.progress(0.0)
        while worker.is_alive():
            done = hub.downloaded_bytes(name)
            bar.progress(min(done / total, 1.0),
                         text=f"{size(done)} / {size(total)}")
            worker.join(0.5)
        if "error" in outcome:
            box.update(state="error")
            raise outcome["error"]
        box.update(label=t(f"{label} downloaded", f"{label} baixado"), state="complete",
                   expanded=False)


def load_named(name: str) -> Loaded:
    """Download if needed, then load through the shared cache, with a spinner (pages that use several models)."""
    hosting.check_offered(name)  # before any download
    _download_with_progress(name)
    with st.spinner(t(f"Loading {name}…", f"Carregando {name}…")):
        return get_model(name)


def current_model() -> Loaded:
    """The sidebar's model, loaded; on failure a clear message and the offline course model."""
    name = chosen_name()
    try:
        return load_named(name)
    except hosting.ModelNotOffered as e:  # e.g. ?model=gpt2-xl on the hosted demo
        st.error(messages.text(e))
    except (ModelUnavailable, ModelTooLarge) as e:
        st.error(t(f"Model {name} is unavailable: {e}", f"O modelo {name} não está disponível: {messages.text(e)}"))
        if name == DEFAULT_OFFLINE:
            st.stop()
    st.info(t(f"Showing the course's small offline model, {DEFAULT_OFFLINE}, instead.",
              f"Mostrando no lugar o modelo pequeno offline do curso, {DEFAULT_OFFLINE}."))
    try:
        return load_named(DEFAULT_OFFLINE)
    except (ModelUnavailable, ModelTooLarge) as e:
        st.error(t(f"The offline model is unavailable too: {e}",
                   f"O modelo offline também não está disponível: {messages.text(e)}"))
        st.stop()


def current_decoder(needs_en: str, needs_pt: str) -> Loaded:
    """The sidebar's model when it is a decoder; otherwise the course decoder, with a notice that says so (the
    pages that read next-token predictions). `needs_*`: what needs the decoder, in each language ("The lens")."""
    m = current_model()
    if m.kind == "decoder":
        return m
    st.info(t(f"{needs_en} needs a decoder, a model that predicts the next token: {m.name} is an encoder. Using the "
              f"course decoder, {DEFAULT_OFFLINE}.", f"{needs_pt} precisa de um decoder, um modelo que prevê o "
              f"próximo token: {m.name} é um encoder. Usando o decoder do curso, {DEFAULT_OFFLINE}."))
    return get_model(DEFAULT_OFFLINE)


BIG_ENCODER, SMALL_ENCODER = "roberta-base", "course-roberta"


def default_encoder() -> str:
    """roberta-base when it is downloaded and fits in the model cache beside the models held now
    (so it never pushes the decoder out and back in on every rerun); otherwise the course encoder."""
    cache = model_cache()
    if not hub.is_available(BIG_ENCODER) or not hosting.offered(BIG_ENCODER):
        return SMALL_ENCODER
    if BIG_ENCODER in cache or cache.used_bytes + models.estimate_bytes(BIG_ENCODER) <= cache.budget:
        return BIG_ENCODER
    return SMALL_ENCODER
