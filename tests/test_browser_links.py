"""Shareable links in a real Chromium: a link reproduces a view in a fresh tab; Back and Forward walk through
views one change at a time, across pages too. Tiny random models stand in for GPT-2 (a fake offline HF cache)."""

import time
from urllib.parse import parse_qs, urlparse

import pytest

from lab.embeddings import PRESETS
from lab.models import registry
from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

TEXT = "The cat sat on the mat because it was tired."


def open_link(browser, url: str, path: str, ready: str):
    """A fresh tab (its own session) on a shared link, once `ready` is drawn and the script is idle."""
    page = new_page(browser, height=1800)
    page.goto(f"{url}{path}")
    page.wait_for_selector(ready, timeout=90_000)
    wait_idle(page)
    return page


def params(page) -> dict[str, str]:
    """The page's query parameters now."""
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query, keep_blank_values=True).items()}


def selected(page, label: str) -> str:
    return page.get_by_role("combobox", name=label).input_value()


def settle(page, check, timeout: float = 30) -> None:
    """Wait until check() holds and the script is idle (a Back/Forward rerun starts a moment later)."""
    deadline = time.monotonic() + timeout
    while True:
        page.wait_for_timeout(250)
        wait_idle(page)
        if check():
            return
        assert time.monotonic() < deadline, "the page never showed the expected state"


def choose(page, label: str, option: str) -> None:
    """Pick an option of the selectbox labelled `label` and wait for the rerun."""
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=option, exact=True).click()
    settle(page, lambda: selected(page, label) == option)


def on_analogies(page) -> bool:
    """Whether the analogies page is what the URL and the screen show."""
    return "/analogies" in page.url and page.get_by_text("Nearest neighbours").count() > 0


def shows_head(page, layer: str, head: str) -> bool:
    """Whether the attention page shows this layer and head (URL, pickers and heatmap title agree)."""
    return ("/attention" in page.url and page.get_by_text("Nearest neighbours").count() == 0
            and page.get_by_text(f"Layer {layer}, head {head}").count() >= 1
            and (selected(page, "Layer"), selected(page, "Head")) == (layer, head))


def no_errors(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0 and page.dialogs == []


def test_a_shared_link_reproduces_the_view_in_a_fresh_tab(tiny_hub_app):
    link = f"/attention?model=gpt2&attn_layer=1&attn_head=3&attn_metric=entropy&attn_text={TEXT.replace(' ', '+')}"
    with chromium() as browser:
        for _ in range(2):  # the teacher's tab, then a student's fresh one: the same view
            page = open_link(browser, tiny_hub_app, link, 'text="Layer 1, head 3"')
            assert (selected(page, "Layer"), selected(page, "Head")) == ("1", "3")
            assert page.get_by_role("textbox", name="Text").input_value() == TEXT
            assert page.get_by_role("radio", name="entropy (bits)").is_checked()
            assert params(page) == {"model": "gpt2", "attn_layer": "1", "attn_head": "3", "attn_metric": "entropy",
                                    "attn_text": TEXT, "lang": "en", "view": "attention"}
            no_errors(page)
            page.close()


def test_garbage_in_a_link_opens_the_defaults_with_a_notice(tiny_hub_app):
    with chromium() as browser:
        page = open_link(browser, tiny_hub_app, "/attention?model=gpt2&attn_layer=99&attn_head=%3Cscript%3E",
                         'text="Layer 0, head 0"')
        notice = page.locator('[data-testid="stAlert"]').filter(has_text="Ignored from the link")
        assert notice.count() == 1 and "attn_layer=99" in notice.inner_text()
        assert "attn_head=<script>" in notice.inner_text()  # shown as text, never run
        assert "attn_layer" not in params(page) and "attn_head" not in params(page)
        no_errors(page)


def test_back_and_forward_walk_through_the_views(tiny_hub_app):
    with chromium() as browser:
        page = open_link(browser, tiny_hub_app, "/attention?model=gpt2", 'text="Layer 0, head 0"')
        choose(page, "Head", "2")
        assert params(page)["attn_head"] == "2"
        choose(page, "Head", "3")
        choose(page, "Layer", "1")
        assert (params(page)["attn_layer"], params(page)["attn_head"]) == ("1", "3")
        steps = [("0", "3"), ("0", "2"), ("0", "0")]  # one change undone per press
        for layer, head in steps:
            page.go_back()
            settle(page, lambda layer=layer, head=head: shows_head(page, layer, head))
        assert "attn_head" not in params(page) and "attn_layer" not in params(page)
        for layer, head in [("0", "2"), ("0", "3"), ("1", "3")]:
            page.go_forward()
            settle(page, lambda layer=layer, head=head: shows_head(page, layer, head))
        assert (params(page)["attn_layer"], params(page)["attn_head"]) == ("1", "3")
        # Another page, then Back: the attention view as it was left. A page switch leaves a few history
        # entries on the way (the sidebar rewrites ?lang= and ?model=); none of them shows a reset view.
        page.get_by_role("link", name="Embedding analogies").first.click()
        settle(page, lambda: on_analogies(page))
        for _ in range(4):
            page.go_back()
            settle(page, lambda: on_analogies(page) or shows_head(page, "1", "3"))
            if "/attention" in page.url:
                break
        assert shows_head(page, "1", "3")
        for _ in range(4):  # then the entry before the last change, on the page itself
            page.go_back()
            settle(page, lambda: shows_head(page, "1", "3") or shows_head(page, "0", "3"))
            if shows_head(page, "0", "3"):
                break
        assert (selected(page, "Layer"), selected(page, "Head")) == ("0", "3") and "attn_layer" not in params(page)
        no_errors(page)


def test_a_change_of_several_inputs_is_one_step_back(tiny_hub_app):
    """A preset fills four words at once: one history entry, so one Back restores all of them."""
    with chromium() as browser:
        page = open_link(browser, tiny_hub_app, "/analogies?model=gpt2", 'text="Nearest neighbours"')
        def words():
            return [page.get_by_role("textbox", name=n, exact=True).input_value() for n in ("A", "− B", "+ C")]

        settle(page, lambda: words() == list(PRESETS["users"][:3]))
        page.get_by_role("combobox", name="Preset").click()
        page.get_by_role("option").filter(has_text="Paris − France + Italy").first.click()
        settle(page, lambda: words() == list(PRESETS["paris"][:3]))
        assert params(page)["an_preset"] == "paris" and "an_a" not in params(page)
        page.get_by_role("textbox", name="+ C", exact=True).fill("Spain")
        page.keyboard.press("Enter")
        settle(page, lambda: params(page).get("an_c") == "Spain")
        page.go_back()
        settle(page, lambda: words() == list(PRESETS["paris"][:3]))
        page.go_back()
        settle(page, lambda: words() == list(PRESETS["users"][:3]))
        assert "an_preset" not in params(page)
        page.go_forward()
        settle(page, lambda: words() == list(PRESETS["paris"][:3]))
        no_errors(page)


def test_back_restores_the_sidebar_model_language_and_presentation(tiny_hub_app):
    """The sidebar's settings are part of the view too: Back undoes a model, a language and a presentation switch."""
    with chromium() as browser:
        page = open_link(browser, tiny_hub_app, "/attention?model=gpt2", '[data-testid="stImage"] img')
        model = page.get_by_role("combobox", name="Model")

        def picked(name):
            return lambda: params(page).get("model") == name and registry.info(name).label in model.input_value()

        model.click()
        page.get_by_role("option").filter(has_text=registry.info("course-gpt2-1x64").label).first.click()
        settle(page, picked("course-gpt2-1x64"))
        page.go_back()
        settle(page, picked("gpt2"))
        page.go_forward()
        settle(page, picked("course-gpt2-1x64"))

        page.get_by_text("Português (Brasil)").click()
        settle(page, lambda: page.get_by_text("Atenção, cabeça por cabeça").count() == 1)
        page.go_back()
        settle(page, lambda: page.get_by_text("Attention, head by head").count() == 1)

        page.get_by_text("Presentation mode", exact=True).click()
        settle(page, lambda: params(page).get("present") == "1" and page.get_by_text("Each token asks").count() == 0)
        page.go_back()
        settle(page, lambda: "present" not in params(page) and page.get_by_text("Each token asks").count() == 1)
        assert not page.get_by_role("switch", name="Presentation mode").is_checked()
        no_errors(page)
