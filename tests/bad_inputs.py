"""The bad-input matrix's cases: what a visitor may type, paste or put in a link (issue 12).

Each case is (name, text). The page and CLI matrices (tests/test_reliability_inputs_*.py) feed every case
to every text box and every command; the markup cases also carry what must never appear rendered.
"""

LONG = "palavra " * 25_000  # 200,000 characters
MARKDOWN = "**negrito** _itálico_ [clique](javascript:alert(1)) ![x](http://127.0.0.1:9/x.png) # título"
LATEX = r"$x^2$ e $$\frac{1}{0}$$ \(a\)"
DIRECTIVES = ":red[alerta] :material/home: :smile: :rainbow-background[fundo]"
SCRIPT = "<script>window.__pwned=1;alert(1)</script>"
IMG = '<img src=x onerror="window.__pwned=1;alert(1)">'

CASES = [
    ("empty", ""),
    ("whitespace", "   \n\t  \u3000 "),
    ("newlines only", "\r\n\r\n\n"),
    ("long 200k", LONG),
    ("one long word", "a" * 5_000),
    ("longer than context", "O troféu não coube na mala. " * 80),
    ("emoji zwj", "👩‍👩‍👧‍👦 família 🏳️‍🌈 e 👍🏽"),
    ("rtl arabic", "مرحبا بالعالم والسلام"),
    ("bidi override", "abc \u202egnp.exe\u202c def \u2066x\u2069"),
    ("nul", "antes\x00depois"),
    ("control chars", "\x01\x02\x07\x1b[31mvermelho\x1b[0m\x7f\x9b"),
    ("lone surrogate", "antes \ud800 depois \udfff"),
    ("noncharacters", "\uffff\ufffe \U0010ffff"),
    ("bom", "\ufeffOlá mundo"),
    ("zero width", "\u200b\u200c\u200d\u2060"),
    ("combining", "e\u0301 Z̴̡̛̤̈́a̸̧͖̓l̷͕̐g̸̱̈o̶̰͝"),
    ("cjk", "日本語のテキストと中文"),
    ("line separators", "um\u2028dois\u2029três"),
    ("script tag", SCRIPT),
    ("img onerror", IMG),
    ("svg onload", '</textarea><svg onload="window.__pwned=1;alert(1)">'),
    ("html entities", "&lt;b&gt; &amp; &#60;script&#62; &quot;"),
    ("markdown", MARKDOWN),
    ("latex", LATEX),
    ("streamlit directives", DIRECTIVES),
    ("endoftext", "<|endoftext|>"),
    ("endoftext in text", "Era uma vez<|endoftext|> um rei <s></s><mask>"),
    ("missing word", "xqzvwkjh"),
    ("format braces", "{0} {name} %s %(x)s {{}}"),
    ("backslashes", "C:\\caminho\\n \\x00 \\u0000"),
    ("punctuation only", "!!! ??? ..."),
    ("one char", "a"),
    ("digits", "3.14159 1e999 NaN -0"),
]

# What must not show up rendered: markup from these cases, as it would look once interpreted.
RENDERED_MARKUP = ("<script", "<img", "<svg", "onerror=", "onload=")
MARKDOWN_RAW = ("**negrito**", "_itálico_", "](javascript:", "![x](", "$x^2$", r"$$\frac", ":red[", ":material/",
                ":smile:", ":rainbow-background[")

# A link's slider values a visitor could hand-craft (the page falls back to defaults with a notice).
URL_CASES = [
    ("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("huge", "1e999"), ("negative", "-5"),
    ("words", "<script>alert(1)</script>"), ("empty", ""), ("long", "9" * 5_000), ("float for int", "3.5"),
    ("tiny", "1e-320"),
]

# The page matrix: every page of the manifest (lab/pages.py) with the inputs its link carries (the lessons'
# catalogue, lab/data/lesson_inputs.json, which running every page writes): each text box gets every case, and
# every other input a garbage value. Only what a page's own words say is listed here, by input key:
# the request a page shows when this text box is blank (a box not named: none is checked for),
ASKS = {"tokens_pt": "Type or paste some Portuguese text", "an_a": "Type a word in each box",
        "an_b": "Type a word in each box", "an_c": "Type a word in each box", "an_word": "Type a word",
        "attn_text": "Type some text", "mask_text": "Type a sentence", "samp_prompt": "Type a prompt",
        "ppl_text": "Type or choose a text", "lens_text": "Type some text", "det_text": "Type a text to score",
        "ceil_text": "Type a text to measure", "code_text": "Type a text to run the code on",
        "fill_text": "The text is empty", "fill_pair": "The text is empty", "fill_train": "Type a sentence to mask",
        "serve_url": "Type the server's URL"}
# (The choice that shows a page's text box, own text or a URL, is the manifest's: lab.pages.Page.own_text.)
SIDEBAR_KEYS = ["present", "lang", "model"]  # the default page's link parameters (the sidebar's)


def matrix(pages=None, catalogue: dict | None = None) -> dict[str, dict]:
    """{page's url path: {"path": its script (None for the default page), "texts": its text boxes' keys, "links":
    its other link parameters, "reveal": {input: value} that shows its text box (the manifest's own_text)}} for
    every manifest page that has any (`pages`, `catalogue`: the manifest's and the lessons' by default)."""
    from lab import lessons
    from lab import pages as manifest

    pages = manifest.PAGES if pages is None else pages
    catalogue = lessons.catalogue() if catalogue is None else catalogue
    out = {}
    for page in pages:
        specs = catalogue.get(page.slug, {})
        texts = [k for k, spec in specs.items() if spec["kind"] == "text"]
        links = SIDEBAR_KEYS if page.default else [k for k, spec in specs.items() if spec["kind"] != "text"]
        if texts or links:
            out[page.slug] = {"path": None if page.default else page.script, "texts": texts, "links": links,
                              "reveal": dict(page.own_text)}
    return out
