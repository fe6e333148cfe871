"""Faults (issue 12): each ends in a clear one-line message and a usable app, and nothing half-written
is kept in the Hugging Face cache.

The download path runs for real: huggingface_hub's own client against tests/fake_hub.py (a loopback
server playing the hub), into a private cache. A full disk is simulated two ways: huggingface_hub's
file writes patched to raise ENOSPC part-way through the weights (runs everywhere), and a real 24 MB
tmpfs filled up while the weights arrive (runs where a tmpfs can be mounted, i.e. as root).
`half_written(cache)` is the check after every fault: no partial file, no blob or snapshot entry
whose bytes are not a whole file of the hub, no link that leads nowhere.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lab import attention, models, sampling
from lab import text as lab_text
from lab.cli import main
from lab.models import ModelUnavailable
from lab.models import hub as lab_hub  # `hub` is the fake hub fixture here
from lab.models.budget import ModelCache
from tests.fake_hub import fake_hub, files_of
from tests.overlap import InFlight
from tests.pages import APP

ROOT = Path(__file__).resolve().parents[1]
GPT2 = "openai-community/gpt2"
WEIGHTS = "model.safetensors"


# ---------------------------------------------------------------- the setting: a private cache, a fake hub

def use_cache(monkeypatch, home: Path) -> Path:
    """Point the HF cache at `home`/hub; return that folder."""
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    return home / "hub"


def go_online(monkeypatch, endpoint: str) -> None:
    """Online mode, with the hub at `endpoint` (huggingface_hub reads both once, at import)."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    lab_hub.forget_silent_hub()


def go_offline(monkeypatch) -> None:
    """HF_HUB_OFFLINE=1, as a classroom without wifi sets it."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


@pytest.fixture
def hub(tmp_path, monkeypatch, tiny_model_dirs):
    """Online; an empty private cache (hub.cache); a fake hub serving a tiny GPT-2 as openai-community/gpt2."""
    files = files_of(tiny_model_dirs["gpt2"])
    with fake_hub({GPT2: files}) as h:
        h.cache, h.files = use_cache(monkeypatch, tmp_path / "hf"), files
        go_online(monkeypatch, h.url)
        yield h
    lab_hub.forget_silent_hub()


def snapshot(cache: Path) -> Path:
    """The cached main revision of openai-community/gpt2."""
    return next((cache / ("models--" + GPT2.replace("/", "--")) / "snapshots").iterdir())


def half_written(cache: Path, files: dict[str, bytes]) -> list[str]:
    """Whatever in the cache is not a whole file of the hub: partial downloads, blobs whose bytes are no
    hub file's, snapshot entries that lead nowhere or hold other bytes than the hub's file of that name."""
    whole = set(files.values())
    bad = []
    for p in sorted(cache.rglob("*")) if cache.exists() else []:
        rel = str(p.relative_to(cache))
        if p.name.endswith(".incomplete"):
            bad.append(rel)
        elif "snapshots" in p.parts and p.is_symlink() and not p.exists():
            bad.append(rel + " (leads nowhere)")
        elif p.parent.name == "blobs" and p.is_file() and p.read_bytes() not in whole:
            bad.append(rel)
        elif "snapshots" in p.parts and p.is_file() and p.read_bytes() != files.get(p.name):
            bad.append(rel)
    return bad


class FullDisk:
    """huggingface_hub's http_get, writing `filename` into a file that raises ENOSPC once `room` bytes are
    on disk (they really are written first). `partial`: the temporary file's path and size when it hit."""

    def __init__(self, monkeypatch, filename: str, room: int):
        from huggingface_hub import file_download

        self.on, self.filename, self.room, self.partial = True, filename, room, None
        real = file_download.http_get

        def http_get(url, temp_file, **kw):
            if self.on and url.endswith("/" + filename):
                temp_file = self._wrap(temp_file)
            return real(url, temp_file, **kw)

        monkeypatch.setattr(file_download, "http_get", http_get)

    def _wrap(self, f):
        disk = self

        class Writer:
            def __init__(self):
                self.left = disk.room

            def write(self, data):
                if len(data) > self.left:
                    f.write(data[: self.left])
                    f.flush()
                    disk.partial = (f.name, os.path.getsize(f.name))
                    self.left = 0
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                self.left -= len(data)
                return f.write(data)

            def __getattr__(self, name):
                return getattr(f, name)

        return Writer()


def one_line(e: BaseException) -> str:
    """str(e), checked to be one line."""
    assert "\n" not in str(e)
    return str(e)


# ---------------------------------------------------------------- the download path, for real

def test_prefetch_downloads_through_the_real_client_then_loads_offline(hub, monkeypatch, capsys):
    """The baseline the faults are measured against: the fake hub is one the real client downloads from."""
    assert main(["prefetch", "gpt2"]) == 0
    assert "gpt2: ready offline" in capsys.readouterr().out
    assert sorted(p.rsplit("/", 1)[1] for p in hub.downloads()) == sorted(hub.files)
    assert half_written(hub.cache, hub.files) == []
    hub.requests.clear()
    assert main(["prefetch", "gpt2"]) == 0 and hub.downloads() == []  # there already: nothing fetched
    go_offline(monkeypatch)
    assert lab_hub.is_available("gpt2") and models.load("gpt2").n_layer == 2


def test_an_unreachable_hub_fails_fast_and_writes_nothing(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on: connections are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cache = use_cache(monkeypatch, tmp_path / "hf")
    go_online(monkeypatch, f"http://127.0.0.1:{port}")
    t0 = time.perf_counter()
    with pytest.raises(ModelUnavailable) as e:
        models.load("distilgpt2")
    assert time.perf_counter() - t0 < lab_hub.PROBE_TIMEOUT_S  # a refused connection: no wait for the probe's timeout
    assert e.value.reason == "hub_silent" and "cannot be reached" in one_line(e.value)
    assert "python -m lab prefetch distilgpt2" in str(e.value)
    assert not list(cache.glob("models--*"))  # not a folder was written
    t0 = time.perf_counter()
    with pytest.raises(ModelUnavailable, match="cannot be reached"):
        lab_hub.download("distilgpt2")
    assert time.perf_counter() - t0 < lab_hub.PROBE_TIMEOUT_S / 3  # the silence is remembered: no new probe


def test_a_connection_dropped_mid_file_keeps_nothing_and_the_next_try_completes(hub):
    hub.drop[WEIGHTS] = 64_000  # the wifi drops 64 kB into the weights, on every retry
    with pytest.raises(ModelUnavailable) as e:
        lab_hub.download("gpt2")
    assert e.value.reason == "download_failed" and "downloading gpt2" in one_line(e.value)
    assert half_written(hub.cache, hub.files) == []
    assert not lab_hub.is_available("gpt2") and not (snapshot(hub.cache) / WEIGHTS).exists()
    del hub.drop[WEIGHTS]
    hub.requests.clear()
    lab_hub.download("gpt2")
    assert [p.rsplit("/", 1)[1] for p in hub.downloads()] == [WEIGHTS]  # the whole files were kept and reused
    assert half_written(hub.cache, hub.files) == [] and models.load("gpt2").n_layer == 2


def test_a_full_disk_mid_download_keeps_nothing_and_says_what_to_do(hub, monkeypatch, capsys):
    """ENOSPC by patching huggingface_hub's writes: 100 kB of the weights reach the disk, then it is full."""
    disk = FullDisk(monkeypatch, WEIGHTS, room=100_000)
    assert main(["prefetch", "gpt2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after huggingface_hub's progress bar
    assert err.startswith("lab: error: ran out of disk space while downloading gpt2")
    assert str(hub.cache) in err and "python -m lab prefetch gpt2" in err
    path, size = disk.partial
    assert size == 100_000 and not os.path.exists(path)  # the partial file existed, and is gone
    assert half_written(hub.cache, hub.files) == [] and not lab_hub.is_available("gpt2")
    with pytest.raises(ModelUnavailable) as e:
        lab_hub.download("gpt2")
    assert e.value.reason == "no_space" and e.value.details["need"] == len(hub.files[WEIGHTS])
    disk.on = False  # space was freed
    assert main(["prefetch", "gpt2"]) == 0
    assert half_written(hub.cache, hub.files) == [] and models.load("gpt2").n_layer == 2


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 24 MB tmpfs (root only; skipped elsewhere: the patched-writes test covers ENOSPC there)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> None:
    """Write a ballast file until only about `leave` bytes stay free on `disk`."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(disk / "ballast", "ab") as f:
        f.write(b"\0" * max(free - leave, 0))


def test_a_really_full_disk_before_and_during_the_download(tiny_disk, tmp_path, monkeypatch, tiny_model_dirs):
    """ENOSPC from the kernel: a tmpfs that is full before the download (refused at once, nothing fetched),
    then one that fills up while the weights arrive (another program writing), then one with room."""
    files = files_of(tiny_model_dirs["gpt2"])
    assert sum(map(len, files.values())) < 20e6  # it fits on the 24 MB disk when nothing else is there
    with fake_hub({GPT2: files}) as hub:
        cache = use_cache(monkeypatch, tiny_disk / "hf")
        go_online(monkeypatch, hub.url)
        fill(tiny_disk, leave=1_000_000)
        with pytest.raises(ModelUnavailable) as e:
            lab_hub.download("gpt2")
        assert e.value.reason == "no_space" and "not enough disk space to download gpt2" in one_line(e.value)
        assert hub.downloads() == []  # refused before a byte was fetched
        (tiny_disk / "ballast").unlink()
        hub.before_body[WEIGHTS] = lambda: fill(tiny_disk, leave=200_000)  # the disk fills as the weights come
        with pytest.raises(ModelUnavailable) as e:
            lab_hub.download("gpt2")
        assert e.value.reason == "no_space" and "ran out of disk space" in one_line(e.value)
        assert half_written(cache, files) == [] and not lab_hub.is_available("gpt2")
        del hub.before_body[WEIGHTS]
        (tiny_disk / "ballast").unlink()
        lab_hub.download("gpt2")
        assert half_written(cache, files) == [] and models.load("gpt2").n_layer == 2
    lab_hub.forget_silent_hub()


# ---------------------------------------------------------------- a damaged or half-downloaded cache

def test_truncated_cached_weights_are_removed_not_loaded_and_prefetch_replaces_them(hub, monkeypatch, capsys):
    lab_hub.download("gpt2")
    link = snapshot(hub.cache) / WEIGHTS
    blob = link.resolve()
    blob.write_bytes(hub.files[WEIGHTS][: len(hub.files[WEIGHTS]) // 2])  # a copy of the cache cut short
    go_offline(monkeypatch)
    assert not lab_hub.is_available("gpt2")
    with pytest.raises(ModelUnavailable) as e:
        models.load("gpt2")
    msg = one_line(e.value)
    assert e.value.reason == "offline" and "a damaged copy was removed: model.safetensors is truncated" in msg
    assert "python -m lab prefetch gpt2" in msg and e.value.details["damaged"]
    assert not link.exists() and not blob.exists() and half_written(hub.cache, hub.files) == []
    assert main(["models", "--json"]) == 0 and '"cached": false' in capsys.readouterr().out
    go_online(monkeypatch, hub.url)
    hub.requests.clear()
    assert main(["prefetch", "gpt2"]) == 0  # the command the message gave
    assert [p.rsplit("/", 1)[1] for p in hub.downloads()] == [WEIGHTS]
    assert models.load("gpt2").n_layer == 2


@pytest.mark.parametrize("missing", ["config.json", "tokenizer.json"])
def test_a_cache_missing_a_file_is_not_taken_for_the_model(hub, monkeypatch, missing):
    lab_hub.download("gpt2")
    link = snapshot(hub.cache) / missing
    link.resolve().unlink()  # a download that never got this file
    link.unlink()
    go_offline(monkeypatch)
    assert not lab_hub.is_available("gpt2")
    with pytest.raises(ModelUnavailable) as e:
        models.load("gpt2")
    assert e.value.reason == "offline" and "is not in the local Hugging Face cache and" in one_line(e.value)
    go_online(monkeypatch, hub.url)
    hub.requests.clear()
    lab_hub.download("gpt2")
    assert [p.rsplit("/", 1)[1] for p in hub.downloads()] == [missing]
    assert models.load("gpt2").n_layer == 2


def test_a_config_that_is_not_json_is_removed(hub, monkeypatch):
    lab_hub.download("gpt2")
    blob = (snapshot(hub.cache) / "config.json").resolve()
    blob.write_text('{"model_type": "gpt2", "n_')  # cut short
    go_offline(monkeypatch)
    with pytest.raises(ModelUnavailable, match=r"damaged copy was removed: config.json cannot be read"):
        models.load("gpt2")
    assert not blob.exists() and half_written(hub.cache, hub.files) == []


def test_a_damaged_copy_laid_out_without_links_is_removed_too(tmp_path, monkeypatch, tiny_model_dirs):
    """Some caches hold plain files (a copied cache, Windows without symlinks)."""
    from tests.test_models import fake_hub_cache

    cache = use_cache(monkeypatch, tmp_path / "hf")
    repo = fake_hub_cache(cache, GPT2, tiny_model_dirs["gpt2"])
    weights = next((repo / "snapshots").iterdir()) / WEIGHTS
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ModelUnavailable, match="damaged copy was removed: model.safetensors is truncated"):
        models.load("gpt2")
    assert not weights.exists()


def test_partial_downloads_of_a_killed_process_go_but_not_one_under_way(hub, monkeypatch):
    from filelock import FileLock

    lab_hub.download("gpt2")
    blobs = hub.cache / ("models--" + GPT2.replace("/", "--")) / "blobs"
    link = snapshot(hub.cache) / WEIGHTS
    etag = link.resolve().name
    link.resolve().unlink()
    link.unlink()  # as if the process was killed while the weights came in:
    orphan = blobs / f"{etag}.1a2b3c4d.incomplete"
    orphan.write_bytes(b"\0" * 5000)
    live = blobs / "f00d.5e6f7a8b.incomplete"  # another download, under way right now, holds its lock
    live.write_bytes(b"\0" * 10)
    lock = FileLock(str(hub.cache / ".locks" / blobs.parent.name / "f00d.lock"))
    go_offline(monkeypatch)
    with lock, pytest.raises(ModelUnavailable, match="not in the local Hugging Face cache"):
        models.load("gpt2")
    assert not orphan.exists() and live.exists()
    assert lab_hub.downloaded_bytes("gpt2") == sum(len(d) for f, d in hub.files.items() if f != WEIGHTS) + 10


# ---------------------------------------------------------------- a pass or a load abandoned half-way

class Leave(BaseException):
    """What stops a script whose reader left (Streamlit raises its StopException, a BaseException)."""


def test_a_pass_abandoned_half_way_leaves_the_shared_model_as_it_was():
    """Generation stopped after three tokens, and passes interrupted inside layer 1 (masked, unmasked,
    sampling): afterwards every result is bit for bit what it was, and the config is untouched."""
    m = models.load(models.DEFAULT_OFFLINE)
    text = "The trophy didn't fit in the suitcase because it was too big."
    ids = lab_text.encode(m.tokenizer, text)
    config = m.model.config.to_json_string()
    before = {c: attention.attention(m.model, ids, causal=c) for c in (True, False)}
    text_before = sampling.sample(m.model, m.tokenizer, text, 12, 1.0, 0, 1.0, seed=7)["tokens"]

    steps = sampling.steps(m.model, ids, 40, 1.0, 0, 1.0, 7, stop_at_eos=False)
    for _ in range(3):
        next(steps)
    steps.close()  # the reader left mid-stream

    def leave(module, args, output):
        raise Leave()

    hook = m.model.base_model.h[1].register_forward_hook(leave)  # on a private copy: loaded for this test
    try:
        for call in (lambda: attention.attention(m.model, ids, causal=False), lambda: attention.attention(m.model, ids),
                     lambda: sampling.sample(m.model, m.tokenizer, text, 12, 1.0, 0, 1.0, seed=7)):
            with pytest.raises(Leave):
                call()
    finally:
        hook.remove()
    assert m.model.config.to_json_string() == config and not m.model.training
    for c in (True, False):
        assert np.array_equal(attention.attention(m.model, ids, causal=c), before[c])
    assert sampling.sample(m.model, m.tokenizer, text, 12, 1.0, 0, 1.0, seed=7)["tokens"] == text_before


def test_a_load_abandoned_half_way_frees_its_place_and_the_next_session_loads():
    started, asking = threading.Event(), InFlight()
    attempts = []

    def load(key):
        attempts.append(key)
        if len(attempts) == 1:
            started.set()
            deadline = time.monotonic() + 30
            while asking.now < 2 and time.monotonic() < deadline:  # a second session is waiting meanwhile
                time.sleep(0.01)
            time.sleep(0.1)
            raise Leave()  # the first session's script is stopped in the middle of the load
        return object()

    cache = ModelCache(budget=100, load=load, estimate=lambda k: 10)
    left, got = [], []

    def first():
        try:
            with asking:
                cache.get("m")
        except Leave:
            left.append(True)

    t = threading.Thread(target=first)
    t.start()
    assert started.wait(30)
    with asking:
        got.append(cache.get("m"))
    t.join(30)
    assert left == [True] and got[0] is not None and attempts == ["m", "m"] and asking.peak == 2
    assert cache.keys() == ["m"] and cache.loads == 1 and cache.used_bytes == 10


# ---------------------------------------------------------------- in the app: a message, and the app goes on

@pytest.fixture
def app_caches():
    """Fresh Streamlit caches (the process-wide model cache included) before and after."""
    import streamlit as st

    from ui.model_loader import model_cache

    model_cache.clear()
    st.cache_data.clear()
    yield
    model_cache.clear()
    st.cache_data.clear()


def sampling_page(model: str) -> AppTest:
    """The real app on its sampling page, from a shared link ?model=...&samp_n=4, run once."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["model"] = model
    at.query_params["samp_n"] = "4"
    at.switch_page("app_pages/sampling.py")
    at.run()
    return at


def sampled(at: AppTest) -> int:
    """How many generated tokens the page shows (the main, streamed text)."""
    return max((m.value.count('class="samp-tok"') for m in at.markdown), default=0)


def falls_back(at: AppTest) -> None:
    """No exception; the fallback notice; the page works on the offline course model."""
    assert not at.exception
    assert any(models.DEFAULT_OFFLINE in i.value for i in at.info)
    assert sampled(at) == 4


def test_the_app_says_the_hub_is_unreachable_and_goes_on_offline(tmp_path, monkeypatch, app_caches):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    use_cache(monkeypatch, tmp_path / "hf")
    go_online(monkeypatch, f"http://127.0.0.1:{port}")
    at = sampling_page("distilgpt2")
    assert len(at.error) == 1 and "cannot be reached" in at.error[0].value
    assert "python -m lab prefetch distilgpt2" in at.error[0].value and not at.status
    falls_back(at)


def test_the_app_refuses_a_model_over_the_budget_before_downloading_it(hub, monkeypatch, app_caches):
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", "200")  # the course model fits, GPT-2 small (~610 MB) does not
    at = sampling_page("gpt2")
    assert len(at.error) == 1 and "models that fit" in at.error[0].value and "200 MB" in at.error[0].value
    assert hub.downloads() == [] and not at.status  # not a byte fetched for a model that could never load
    falls_back(at)


def test_the_app_survives_a_full_disk_and_downloads_once_there_is_room(hub, monkeypatch, app_caches):
    disk = FullDisk(monkeypatch, WEIGHTS, room=100_000)
    at = sampling_page("gpt2")
    assert len(at.status) == 1 and at.status[0].state == "error"
    assert len(at.error) == 1 and "ran out of disk space while downloading gpt2" in at.error[0].value
    falls_back(at)
    assert half_written(hub.cache, hub.files) == []
    disk.on = False  # the teacher freed some space; the same tab, run again
    at.run()
    assert not at.exception and not at.error and at.status[0].state == "complete"
    from ui.model_loader import model_cache

    # >= 1, not 4: switching models resets the page's "New tokens" to 1 (seen here; reported, issue 11's URL state)
    assert "gpt2" in model_cache().keys() and sampled(at) >= 1 and half_written(hub.cache, hub.files) == []


def test_the_app_with_a_damaged_cache_says_so_and_works_after_a_prefetch(hub, monkeypatch, app_caches):
    lab_hub.download("gpt2")
    blob = (snapshot(hub.cache) / WEIGHTS).resolve()
    blob.write_bytes(blob.read_bytes()[:5000])
    go_offline(monkeypatch)
    at = sampling_page("gpt2")
    assert len(at.error) == 1 and "damaged copy was removed" in at.error[0].value
    falls_back(at)
    go_online(monkeypatch, hub.url)
    assert main(["prefetch", "gpt2"]) == 0
    go_offline(monkeypatch)
    at.run()
    assert not at.exception and not at.error and sampled(at) >= 1  # >= 1: see the test above
    from ui.model_loader import model_cache

    assert "gpt2" in model_cache().keys()
