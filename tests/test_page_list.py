"""The page list the browser tests walk is the app's own navigation (the page manifest, lab/pages.py, which
app.py's navigation reads, so a new page joins them by itself), and the rule that tells a request that would leave
the machine from one to the app's own server (tests/test_browser_a11y.py records every request of every page in
both languages and presentation mode)."""

from pathlib import Path

from tests.pages import APP, outside, page_paths
from ui.chapters import TITLES


def test_the_page_list_is_the_manifest_and_app_py_navigates_it():
    paths = page_paths()
    assert paths[0] == "" and "tokens" in paths and "sampling" in paths and len(paths) == len(set(paths))
    source = Path(APP).read_text(encoding="utf-8")
    assert "st.navigation(navigation.pages()" in source and "st.Page(" not in source  # no list of its own
    assert len(paths) == len(TITLES)  # every page the home page's map titles
    # every page file is in the navigation (app_pages/home.py is served at /)
    files = (Path(APP).parent / "app_pages").glob("*.py")
    assert sorted(paths) == sorted("" if p.stem == "home" else p.stem for p in files)


def test_outside_recognises_other_hosts():
    base = "http://127.0.0.1:8501"
    assert outside(["http://127.0.0.1:8501/x", "http://localhost:8501/y", "data:image/png;base64,AA",
                    "blob:http://127.0.0.1:8501/abc"], base) == []
    assert outside(["https://fonts.gstatic.com/s/x.woff2", "http://127.0.0.1:9999/z"], base) == [
        "https://fonts.gstatic.com/s/x.woff2", "http://127.0.0.1:9999/z"]
