"""Nothing leaves the machine: a real Chromium opens every page of app.py's navigation and records every request
(those the browser sent and those that failed); each must go to the app's own server. Offline in a classroom an
outside request fails; on a hosted demo it tells that outside host who visits.

The pages come from app.py itself (its st.Page entries, read with ast), so a new page joins this test by itself.
Tiny random models stand in for GPT-2 and RoBERTa (a fake offline Hugging Face cache, tests/conftest.py)."""

import ast
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.pages import APP
from tests.streamlit_server import chromium, new_page, wait_idle
from ui.chapters import TITLES

pytestmark = pytest.mark.browser

LOCAL_SCHEMES = {"data", "blob", "about"}  # made inside the page: no network at all
VIEWS = [("en", False), ("pt", True)]  # English as a reader opens it; Portuguese in presentation mode


def page_paths(app: Path = Path(APP)) -> list[str]:
    """The URL path of every page in app.py's source, each a call of its page(name, icon) helper (or st.Page): ""
    for the default page, else its file's stem (or url_path)."""
    paths = []
    for node in ast.walk(ast.parse(app.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "page":
            default = any(k.arg == "default" and ast.literal_eval(k.value) is True for k in node.keywords)
            paths.append("" if default else ast.literal_eval(node.args[0]))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page" \
                and not isinstance(node.args[0], ast.JoinedStr):  # (the helper's own st.Page(f"...") is no page)
            kw = {k.arg: k.value for k in node.keywords}
            if "default" in kw and ast.literal_eval(kw["default"]) is True:
                paths.append("")
            elif "url_path" in kw:
                paths.append(ast.literal_eval(kw["url_path"]))
            else:
                paths.append(Path(ast.literal_eval(node.args[0])).stem)
    return paths


def outside(urls: list[str], base: str) -> list[str]:
    """The URLs among `urls` that would leave the machine: neither the app's own host:port nor made in the page."""
    own = urlparse(base)
    here = {f"127.0.0.1:{own.port}", f"localhost:{own.port}"}
    return [u for u in urls if urlparse(u).scheme not in LOCAL_SCHEMES and urlparse(u).netloc not in here]


def visit(browser, url: str, path: str, query: str) -> tuple[list[str], str]:
    """Every URL a fresh tab asks for while it opens this page and the script settles (sent or failed), and the
    address of the icon the tab shows."""
    page = new_page(browser)
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    page.on("requestfailed", lambda r: seen.append(r.url))
    page.goto(f"{url}/{path}?{query}", wait_until="networkidle", timeout=90_000)
    wait_idle(page, timeout_ms=90_000)
    page.wait_for_timeout(1500)  # late fetches: icons, fonts and charts drawn after the run ends
    page.wait_for_load_state("networkidle")
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, f"/{path}?{query} raised: {errors.first.inner_text()[:1500]}"
    icon = page.eval_on_selector('link[rel~="icon"]', "e => e.href")
    page.close()
    return seen, icon


def test_the_page_list_is_read_from_app_py():
    paths = page_paths()
    assert paths[0] == "" and "tokens" in paths and "sampling" in paths and len(paths) == len(set(paths))
    source = Path(APP).read_text(encoding="utf-8")
    assert len(paths) == source.count("st.Page(") - source.count('st.Page(f"') + source.count('page("')
    assert len(paths) == len(TITLES)  # every page the home page's map titles


def test_outside_recognises_other_hosts():
    base = "http://127.0.0.1:8501"
    assert outside(["http://127.0.0.1:8501/x", "http://localhost:8501/y", "data:image/png;base64,AA",
                    "blob:http://127.0.0.1:8501/abc"], base) == []
    assert outside(["https://fonts.gstatic.com/s/x.woff2", "http://127.0.0.1:9999/z"], base) == [
        "https://fonts.gstatic.com/s/x.woff2", "http://127.0.0.1:9999/z"]


@pytest.mark.parametrize(("lang", "present"), VIEWS)
def test_every_page_asks_only_its_own_server(tiny_hub_app, lang, present):
    query = f"lang={lang}" + ("&present=1" if present else "")
    with chromium() as browser:
        report, icons = {}, {}
        for path in page_paths():
            urls, icons[f"/{path}"] = visit(browser, tiny_hub_app, path, query)
            assert any(urlparse(u).path.startswith("/static/") for u in urls), f"/{path}: no request recorded"
            report[f"/{path}"] = sorted(set(outside(urls, tiny_hub_app)))
    assert {p: u for p, u in report.items() if u} == {}, "requests that would leave the machine"
    # the shipped icon, sent inline (not a missing or default one)
    assert {p: i[:80] for p, i in icons.items() if not i.startswith("data:image/svg+xml")} == {}
