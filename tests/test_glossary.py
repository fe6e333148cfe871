"""The glossary: every term in both languages, every link opens its view with its inputs (no exception, no link
value ignored), the search filters, and the home page links to it."""

from __future__ import annotations

import pytest

from tests.pages import open_page
from ui.chapters import TITLES
from ui.glossary import TERMS, matching

PAGE = "app_pages/glossary.py"


def test_every_term_in_both_languages_and_the_course_words_are_there():
    keys = [k for k, *_ in TERMS]
    assert len(keys) == len(set(keys))
    for key, term, definition, page, params in TERMS:
        assert page in TITLES, key
        assert all(term) and all(definition) and definition[0] != definition[1], key
        assert params, f"{key}: a link with inputs, not just a page"
    named = " ".join(term[0].lower() for _, term, *_ in TERMS)
    for word in ("token", "bpe", "vocabulary", "embedding", "layer", "head", "attention", "mask", "residual stream",
                 "layer norm", "logit", "softmax", "temperature", "perplexity", "bits per byte", "encoder", "decoder",
                 "kv cache", "batch", "ttft", "auroc"):
        assert word in named, word


def test_the_heads_pages_words_are_terms_that_open_it():
    """Issue 60: every term the heads page uses is a term, in both languages, and links that page."""
    by_name = {term[0].lower(): (term[1].lower(), definition, page) for _, term, definition, page, _ in TERMS}
    for en, pt in (("induction head", "cabeça de indução"), ("previous-token head", "cabeça de token anterior"),
                   ("knock-out", "desligar"), ("ablation", "ablação"),
                   ("in-context learning", "aprendizado em contexto"),
                   ("activation patching", "patching de ativações"), ("logit difference", "diferença de logits")):
        found = [(name, v) for name, v in by_name.items() if en in name]
        assert len(found) == 1, (en, found)
        name, (term_pt, definition, page) = found[0]
        assert pt in term_pt and page == "app_pages/heads.py", (en, term_pt, page)
    knockout = next(d for name, (_, d, _) in by_name.items() if "knock-out" in name)
    assert all(w in knockout[0] for w in ("zero", "mean")) and all(w in knockout[1] for w in ("zeros", "média"))


def test_search_matches_either_language_without_accents():
    assert [k for k, *_ in matching("atencao", pt=True)][:1] == ["attention"]
    assert "mask" in [k for k, *_ in matching("MÁSCARA", pt=True)]
    assert len(matching("", pt=False)) == len(TERMS)
    assert matching("xqzvwk", pt=False) == []


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_page_lists_every_term_with_its_link_and_filters(fresh_caches, lang):
    at = open_page(PAGE, timeout=60, lang=lang)
    assert len([c for c in at.main.children.values()]) > 0
    links = [e for e in at.get("page_link")]
    assert len(links) == len(TERMS)
    at.text_input(key="gl_search").set_value("softmax").run()
    assert not at.exception
    assert len(at.get("page_link")) == len(matching("softmax", lang == "pt")) >= 1


@pytest.mark.parametrize(("key", "page", "params"), [(k, p, q) for k, _, _, p, q in TERMS], ids=[k for k, *_ in TERMS])
def test_every_link_opens_its_view(fresh_caches, key, page, params):
    """The link's page with the link's inputs: no exception, and no notice that a link value was ignored."""
    at = open_page(page, timeout=180, check=False, **params)
    assert not at.exception, (key, at.exception)
    ignored = [w.value for w in at.warning if "link" in w.value.lower()]
    assert not ignored, (key, ignored)
    for name, value in params.items():
        assert at.query_params.get(name) in (value, [value]) or name in at.session_state, (key, name)


def test_every_string_in_the_pages_language(course_standins):
    """tests/test_translations.py's check on the glossary page, both languages."""
    from tests.test_translations import numbers_in, problems, report, visit

    english, portuguese = visit("glossary", "en"), visit("glossary", "pt")
    found = problems(english, "en", set()) + problems(portuguese, "pt", numbers_in(english))
    assert len(portuguese) > 5 and len(english) > 5
    assert not found, report(found)


def test_the_home_map_links_every_chapter_and_the_glossary():
    from ui.chapters import CHAPTERS

    assert [c[0] for c in CHAPTERS] == [f"{i:02d}" for i in range(17)] + ["—"]
    missing = [c[0] for c in CHAPTERS if not c[3]]
    assert not missing, f"chapters without a page: {missing}"
