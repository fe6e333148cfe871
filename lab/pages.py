"""The page manifest: every page of the app, named once (no Streamlit here).

A page is one entry of PAGES, in the navigation's order. Everything else that names pages reads it:
app.py's navigation (ui/navigation.py), the course map and the lab guide (ui/chapters.py), the lessons' schema
(lab.lessons.PAGES, VIEWS), the CLI (lab.cli.MODULES), the benchmarks (lab.benchmarks.MODULES), the class bench
(lab.benchmarks.class_readers.PAGES) and the tests' page matrices. A new page is its own files plus one entry here.

Commands and benchmarks that belong to no one page (the model catalogue, training, the bench itself, the
replicas, lessons; a crowd on one link, a room) are listed after the pages: they follow them in `--help` and
in `python -m lab bench`.

Everything is read when it is needed (these are functions, and the names other modules export from them are
computed on access), so an entry added at run time, as tests/test_page_manifest.py adds one, is everywhere at once.
"""

from __future__ import annotations

from dataclasses import dataclass

# The course's chapters (../shared/course: 00-16) and the glossary ("—"), in the course map's order.
CHAPTERS = tuple(f"{n:02d}" for n in range(17)) + ("—",)


@dataclass(frozen=True)
class Page:
    """One page. slug: its url path (/slug; the default page is served at /), its ?view= and a lesson step's
    page; its script is app_pages/<slug>.py unless `file` says otherwise. title: (English, Portuguese), as the
    navigation and the course map name it. icon: a Material Symbols name (shipped as a font, never fetched).
    chapters: the course chapters it shows, in the course map (the page's own chapter first). commands: the
    `python -m lab` commands that print what it shows (the lab guide links them to it), registered by the
    modules in `cli`. bench: the lab.benchmarks modules measuring it; class_bench: whether the class-on-one-link
    bench opens it. views: the views a lesson step can be about, its main one first (the page draws each in
    ui.presentation.view(name)). own_text: the choices that reveal the page's text box, (input, value) pairs (its
    own text, a URL to measure): a page whose text box is hidden until the reader picks "own text" names that pick
    here, and everything that must reach the box reads it (scripts/lesson_headless.py's inputs, the bad-input
    matrix); () when the box is always there or the page has none."""

    slug: str
    title: tuple[str, str]
    icon: str
    chapters: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    cli: tuple[str, ...] = ()
    bench: tuple[str, ...] = ()
    class_bench: bool = False
    views: tuple[str, ...] = ()
    default: bool = False
    file: str = ""
    own_text: tuple[tuple[str, str], ...] = ()

    @property
    def script(self) -> str:
        """The page's script, as st.Page, st.page_link and the tests name it ("app_pages/tokens.py")."""
        return self.file or f"app_pages/{self.slug}.py"


PAGES: tuple[Page, ...] = (
    Page("home", ("Home", "Início"), "home", views=("map",), class_bench=True, default=True),
    Page("fossils", ("The fossils", "Os fósseis"), "history_edu", ("00",), ("fossils",), ("lab.cli.fossils",),
         ("lab.benchmarks.fossils",), views=("shape",)),
    Page("glossary", ("Glossary", "Glossário"), "menu_book", ("—",), views=("terms",)),
    Page("tokens", ("Tokenization costs", "Custo da tokenização"), "translate", ("01",), ("tokens", "premium"),
         ("lab.cli.tokens",), ("lab.benchmarks.tokens",), True, ("costs", "chips")),
    Page("analogies", ("Embedding analogies", "Analogias de embeddings"), "explore", ("02",),
         ("analogy", "neighbours"), ("lab.cli.embeddings",), ("lab.benchmarks.embeddings",), True, ("answer",)),
    Page("attention", ("Attention heads", "Cabeças de atenção"), "visibility", ("03", "04"), ("attention",),
         ("lab.cli.attention",), ("lab.benchmarks.attention",), True, ("head", "all_heads")),
    Page("causal_mask", ("The causal mask", "A máscara causal"), "theater_comedy", ("04", "11"), ("trophy",),
         ("lab.cli.attention",), (), True, ("mask", "trophy")),
    Page("logit_lens", ("Logit lens", "Lente dos logits"), "layers", ("05",), ("lens",), ("lab.cli.lens",),
         ("lab.benchmarks.lens",), True, ("grid", "follow")),
    Page("heads", ("Heads at work", "Cabeças em ação"), "psychology", ("04", "05"), ("heads",), ("lab.cli.heads",),
         ("lab.benchmarks.heads",), True, views=("copy", "knockout", "patch"),
         own_text=(("heads_source", "own"), ("heads_pair", "own"))),
    Page("perplexity", ("Perplexity", "Perplexidade"), "trending_down", ("06", "08", "09"), ("perplexity",),
         ("lab.cli.perplexity",), ("lab.benchmarks.perplexity",), True, ("table", "surprisal"),
         own_text=(("ppl_source", "own"),)),
    Page("sampling", ("Sampling", "Amostragem"), "casino", ("07",), ("next", "sample"), ("lab.cli.sampling",),
         ("lab.benchmarks.sampling",), True, ("text", "distribution", "compare")),
    Page("fill", ("Fill in the blank", "Preencher a lacuna"), "edit_note", ("09", "10", "11"), ("fill", "history"),
         ("lab.cli.fill",), ("lab.benchmarks.fill",), True, ("fill", "compare", "masking")),
    Page("detector", ("The detector", "O detector"), "policy", ("12",), ("detect", "detect-eval"),
         ("lab.cli.detect",), ("lab.benchmarks.detect",), True, ("colours", "verdict", "base_rate"),
         own_text=(("det_source", "own"),)),
    Page("code", ("Code beside the tensors", "O código ao lado dos tensores"), "code", ("13",), ("trace",),
         ("lab.cli.trace",), ("lab.benchmarks.code",), True, ("tensor",)),
    Page("serving", ("Serving over HTTP", "Servir por HTTP"), "dns", ("14",), ("serve", "loadtest"),
         ("lab.cli.serve",), ("lab.benchmarks.serving",), True, ("commands",), own_text=(("serve_source", "url"),)),
    Page("lab_guide", ("The lab guide", "O guia do laboratório"), "terminal", ("15",), views=("commands",)),
    Page("ceiling", ("The ceiling", "O teto"), "vertical_align_top", ("16",), ("ceiling",), ("lab.cli.ceiling",),
         ("lab.benchmarks.ceiling",), True, ("curves",), own_text=(("ceil_source", "own"),)),
)

# Commands no page reproduces: command -> its chapter in the lab guide; and the modules that register them.
OTHER_COMMANDS = {"models": "00", "prefetch": "00", "detect-set": "12", "bench": "15", "corpus": "15",
                  "train": "15", "course-eval": "15", "replicas": "15", "lesson": "15",
                  "guess": "06, 07"}
OTHER_CLI = ("lab.cli.bench", "lab.cli.models", "lab.cli.train", "lab.cli.replicas", "lab.cli.lessons",
             "lab.cli.guess")
# Benchmarks of no one page: model loading, the hosted demo, the two slow pages in Chromium, a class on one
# link, a room, a room's answers, the first visit after a start.
OTHER_BENCH = ("lab.benchmarks.loading", "lab.benchmarks.hosting", "lab.benchmarks.pages",
               "lab.benchmarks.class_readers", "lab.benchmarks.container", "lab.benchmarks.rooms",
               "lab.benchmarks.answers", "lab.benchmarks.warmup")


def slugs() -> tuple[str, ...]:
    """Every page's url path, in the navigation's order."""
    return tuple(p.slug for p in PAGES)


def by_slug(slug: str) -> Page:
    """The page at /slug (KeyError for none)."""
    for p in PAGES:
        if p.slug == slug:
            return p
    raise KeyError(slug)


def views() -> dict[str, tuple[str, ...]]:
    """{slug: its views, the main one first}."""
    return {p.slug: p.views for p in PAGES}


def _unique(names) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def cli_modules() -> tuple[str, ...]:
    """The command modules, in the order `python -m lab --help` lists them: the pages' in the navigation's order,
    then the others."""
    return _unique([m for p in PAGES for m in p.cli] + list(OTHER_CLI))


def bench_modules() -> tuple[str, ...]:
    """The benchmark modules, in the order `python -m lab bench` runs them: the pages', then the others."""
    return _unique([m for p in PAGES for m in p.bench] + list(OTHER_BENCH))


def class_pages() -> tuple[str, ...]:
    """The pages a class on one link opens in the class bench, home first."""
    return tuple(p.slug for p in PAGES if p.class_bench)


def commands() -> dict[str, tuple[str, str | None]]:
    """{command: (its chapters, "03, 04"; the script of the page it reproduces, or None)} for the lab guide."""
    out = {c: (", ".join(p.chapters), p.script) for p in PAGES for c in p.commands}
    return out | {c: (chapter, None) for c, chapter in OTHER_COMMANDS.items()}


def in_chapter(chapter: str, lead: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The scripts of the pages showing `chapter`, its `lead` pages first, the others in the navigation's order."""
    named = [p for p in PAGES if chapter in p.chapters]
    named.sort(key=lambda p: lead.index(p.slug) if p.slug in lead else len(lead))  # stable: navigation order
    return tuple(p.script for p in named)


def problems(pages: tuple[Page, ...] | None = None) -> list[str]:
    """What is wrong with the manifest, in English (empty when nothing): a repeated slug, command or view, a
    chapter the course does not have, one default page."""
    pages = PAGES if pages is None else pages
    found = []
    for what, names in (("slug", [p.slug for p in pages]), ("command", [c for p in pages for c in p.commands])):
        found += [f"the {what} {n!r} is named twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for p in pages:
        found += [f"{p.slug}: chapter {c!r} is not a chapter of the course" for c in p.chapters if c not in CHAPTERS]
        found += [f"{p.slug}: the view {v!r} is named twice" for v in set(p.views) if p.views.count(v) > 1]
        if not p.views:
            found.append(f"{p.slug}: no view (a lesson step needs its main view)")
        if p.script.rsplit("/", 1)[-1] != f"{p.slug}.py":
            found.append(f"{p.slug}: its script {p.script} is not named {p.slug}.py (the url path is the file's)")
    if sum(p.default for p in pages) != 1:
        found.append("exactly one page must be the default page")
    return found
