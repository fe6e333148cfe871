"""The serving config (issue 41): the app as `make run` serves it watches no files and forces no full garbage
collection after each run, both measured on a live server through Streamlit's own websocket protocol.

The live checks serve a probe script from the repository's root, as `make run` serves app.py, so the
repository's .streamlit/config.toml is what decides; the probe counts full (generation 2) collections with
gc.callbacks and is edited on disk while a reader listens for the watcher's "script_changed_on_disk".
"""

import json
import subprocess
import sys
import threading
import time

import pytest

from bench_pages.readers import app_server, read
from lab.testing.browser import ROOT

PROBE = '''import gc
import sys

import streamlit as st

if not hasattr(sys, "_full_collections"):
    sys._full_collections = [0]

    def _count(phase, info):
        if phase == "start" and info["generation"] == 2:
            sys._full_collections[0] += 1

    gc.callbacks.append(_count)
st.markdown(f"full collections: {sys._full_collections[0]}")
'''


def test_the_config_file_turns_both_off():
    """streamlit.config, reading the repository's config the way `streamlit run` does (cwd = the repository)."""
    code = ("import json, streamlit.config as c; c.get_config_options(force_reparse=True); "
            "print(json.dumps([c.get_option('server.fileWatcherType'), c.get_option('runner.postScriptGC')]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["none", False]


def test_make_run_serves_app_py_with_no_overriding_flags():
    """`make run` is `streamlit run app.py` with nothing on the command line: the config file decides."""
    recipe = (ROOT / "Makefile").read_text().split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "streamlit run app.py" in recipe
    assert "fileWatcherType" not in recipe and "postScriptGC" not in recipe


def _full_collections(reading) -> int:
    [text] = [x for x in reading.texts if x.startswith("full collections:")]
    return int(text.rsplit(" ", 1)[1])


@pytest.fixture
def probe():
    """A probe script inside the repository (removed after), so its server runs from the repository's root."""
    path = ROOT / "tests" / f"_class_probe_{time.monotonic_ns()}.py"
    path.write_text(PROBE)
    yield path
    path.unlink(missing_ok=True)


def test_served_app_forces_no_full_collection_and_watches_nothing(probe):
    with app_server(str(probe.relative_to(ROOT))) as url:
        first = read(url, timeout=60)
        assert first.finished, first
        for _ in range(10):
            last = read(url, timeout=60)
            assert last.finished, last
        # Forced collections would add one per run (at least 10 here); the generational collector alone
        # rarely reaches generation 2 in a probe this small.
        assert _full_collections(last) - _full_collections(first) < 5

        edit = threading.Timer(1.5, lambda: probe.write_text(PROBE + "# edited\n"))
        edit.start()
        try:
            listened = read(url, timeout=60, linger=5)
        finally:
            edit.join()
        assert listened.finished, listened
        assert "script_changed_on_disk" not in listened.session_events, listened
