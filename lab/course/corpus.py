"""The course models' bilingual corpus: English + Brazilian Portuguese prose from Debian packages.

`build(out_dir, work_dir)` fetches each package with `apt-get download` (no root install),
unpacks it with `dpkg -x`, turns HTML / roff / fortune / plain-text files into prose paragraphs,
drops code-like lines, dedupes paragraphs, groups them into documents, shuffles the documents
with a fixed seed, holds out a test split, and writes text, uint16 token arrays (see
lab.course.tokenizer) and statistics (with the package versions used) under `out_dir`.
The cleaners are pure functions of a string, so the tests need no Debian package.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

SEED = 1234
TEST_FRACTION = 0.05
DOC_CHARS = 3000  # paragraphs are grouped into documents of about this many characters


@dataclass(frozen=True)
class Source:
    """One group of files in one Debian package: its language, format and file pattern."""

    package: str
    lang: str  # "en" | "pt"
    kind: str  # "html" | "roff" | "fortune" | "text"
    pattern: str  # glob inside the unpacked package
    version: str  # the version the published corpus was built from (bookworm)


SOURCES = (
    Source("debian-reference-en", "en", "html", "usr/share/debian-reference/*.en.html", "2.100"),
    Source("debian-reference-pt-br", "pt", "html", "usr/share/debian-reference/*.pt-br.html", "2.100"),
    Source("debian-handbook", "en", "html", "usr/share/doc/debian-handbook/html/en-US/*.html",
           "11.20220922"),
    Source("debian-handbook", "pt", "html", "usr/share/doc/debian-handbook/html/pt-BR/*.html",
           "11.20220922"),
    Source("debian-edu-doc-en", "en", "html", "usr/share/doc/debian-edu-doc-en/*.html", "2.12.23~deb12u1"),
    Source("debian-edu-doc-pt-br", "pt", "html", "usr/share/doc/debian-edu-doc-pt-br/*.html",
           "2.12.23~deb12u1"),
    Source("gimp-help-en", "en", "html", "usr/share/gimp/2.0/help/en/*.html", "2.10.34-2"),
    Source("gimp-help-pt-br", "pt", "html", "usr/share/gimp/2.0/help/pt_BR/*.html", "2.10.34-2"),
    Source("libreoffice-help-en-us", "en", "html", "usr/share/libreoffice/help/en-US/text/**/*.html",
           "4:7.4.7-1+deb12u14"),
    Source("libreoffice-help-pt-br", "pt", "html", "usr/share/libreoffice/help/pt-BR/text/**/*.html",
           "4:7.4.7-1+deb12u14"),
    Source("fortunes", "en", "fortune", "usr/share/games/fortunes/*", "1:1.99.1-7.3"),
    Source("fortunes-br", "pt", "fortune", "usr/share/games/fortunes/*", "20220821"),
    Source("manpages", "en", "roff", "usr/share/man/man*/*.gz", "6.03-2"),
    Source("manpages-dev", "en", "roff", "usr/share/man/man*/*.gz", "6.03-2"),
    Source("manpages-pt-br", "pt", "roff", "usr/share/man/pt_BR/man*/*.gz", "4.18.1-1"),
    Source("manpages-pt-br-dev", "pt", "roff", "usr/share/man/pt_BR/man*/*.gz", "4.18.1-1"),
    Source("focalinux-text", "pt", "text", "usr/share/doc/focalinux/text/*/index.txt.gz", "2010-09-3.1"),
)
SKIP_FORTUNES = {"ascii-art"}  # pictures, not prose


# ---------------------------------------------------------------- text helpers

def read_any(path: Path) -> str:
    """A file's text: gunzipped if .gz, UTF-8 if it decodes, else Latin-1 (older Debian docs)."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def normalize(text: str) -> str:
    """One paragraph on one line: whitespace runs become one space, ends trimmed."""
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks of `text`, each normalised to one line; empty ones dropped."""
    return [p for p in (normalize(b) for b in re.split(r"\n\s*\n", text)) if p]


_CODE_MARKS = re.compile(r"(&&|\|\||==|->|::|/\*|\*/|#include|\$\(|^\$ |^# |^>>>|[;{}]$|^[{}])")


def is_code_like(line: str) -> bool:
    """True for lines that look like code, commands, paths or tables rather than prose."""
    chars = [c for c in line if not c.isspace()]
    if not chars:
        return True
    letters = sum(c.isalpha() for c in chars)
    if letters / len(chars) < 0.6 or _CODE_MARKS.search(line):
        return True
    words = line.split()
    techy = sum(bool(re.search(r"[/_=<>\\|@]|^-|\(\)$", w)) for w in words)
    return techy / len(words) > 0.3


def prose(paras: list[str], min_words: int = 3) -> list[str]:
    """The paragraphs that read as prose: at least `min_words` words and not code-like."""
    return [p for p in paras if len(p.split()) >= min_words and not is_code_like(p)]


_STOP = {
    "en": set("the of and to is in that it for you are with this be on by not or an can if which from "
              "will your was have has they their there when what".split()),
    "pt": set("de que os do da dos das em um uma para com não é ao pelo pela são como seu sua ou você "
              "este esta isso mais também quando pode está ser".split()),
}


def language(text: str) -> str | None:
    """"en" or "pt" by counting each language's common words; None when neither clearly wins."""
    words = re.findall(r"\w+", text.lower())
    en = sum(w in _STOP["en"] for w in words)
    pt = sum(w in _STOP["pt"] for w in words)
    return None if en == pt else ("en" if en > pt else "pt")


# ---------------------------------------------------------------- HTML

class _HTMLText(HTMLParser):
    """Collects the visible text of an HTML page, one paragraph per block element."""

    SKIP = {"script", "style", "pre", "head", "title", "noscript", "svg", "math"}
    BLOCK = {"p", "div", "br", "li", "dt", "dd", "tr", "td", "th", "table", "section", "blockquote",
             "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "hr", "caption", "figure", "body"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html_to_text(page: str) -> str:
    """Visible text of an HTML page with blank lines between blocks; <pre>, scripts, styles dropped."""
    parser = _HTMLText()
    parser.feed(page)
    parser.close()
    return "".join(parser.parts)


# ---------------------------------------------------------------- roff (man pages)

_ROFF_CHARS = {
    "em": "—", "en": "–", "hy": "-", "aq": "'", "dq": '"', "lq": "“", "rq": "”", "oq": "‘", "cq": "’",
    "co": "©", "rg": "®", "bu": "•", "de": "°", "mu": "×", "ti": "~", "ha": "^", "rs": "\\", "la": "⟨",
    "ra": "⟩", "Fo": "«", "Fc": "»", "lA": "⇐", "rA": "⇒", "<=": "≤", ">=": "≥", "+-": "±", "tm": "™",
}
# Requests whose text (arguments) is kept as words; quotes around arguments are removed.
_ROFF_FONT = {"B", "I", "R", "BR", "RB", "BI", "IB", "IR", "RI", "SB", "SM", "TP", "IP", "SH", "SS", "UR", "MT"}
_ROFF_ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
_ROFF_BREAK = {"PP", "LP", "P", "SH", "SS", "TP", "IP", "HP", "sp", "br", "RS", "RE", "TH", "in", "ti"}
_ROFF_DROP_BLOCKS = {"nf": "fi", "EX": "EE", "TS": "TE", "EQ": "EN", "de": ".."}


def roff_escapes(line: str) -> str:
    """Replace roff escapes in one line: fonts and sizes dropped, named characters mapped."""
    line = re.sub(r"\\\[([^\]]*)\]", lambda m: _ROFF_CHARS.get(m.group(1), ""), line)
    line = re.sub(r"\\\((..)", lambda m: _ROFF_CHARS.get(m.group(1), ""), line)
    line = re.sub(r"\\\*(\(..|\[[^\]]*\]|.)", lambda m: {"(lq": "“", "(rq": "”", "R": "®"}.get(m.group(1), ""),
                  line)
    line = re.sub(r"\\f(\(..|\[[^\]]*\]|.)", "", line)  # font changes
    line = re.sub(r"\\s[+-]?\d", "", line)  # size changes
    line = re.sub(r"\\[hvwlLkozn]'[^']*'", "", line)  # motions, widths
    line = re.sub(r"\\[&:%|^)]", "", line)  # zero-width marks
    line = line.replace("\\-", "-").replace("\\ ", " ").replace("\\~", " ").replace("\\0", " ")
    line = line.replace("\\e", "\\").replace("\\c", "")
    return re.sub(r"\\(.)", r"\1", line)


def _roff_args(rest: str, glue: str = " ") -> str:
    """A request's arguments as plain text joined by `glue` (double quotes removed)."""
    return glue.join(a.strip('"') for a in re.findall(r'"[^"]*"|\S+', rest))


def roff_to_text(src: str) -> str:
    """Prose of a man page: requests become paragraph breaks, font requests keep their words,
    comments, tables, equations and no-fill (example) blocks are dropped."""
    out: list[str] = []
    end_block = None
    for raw in src.splitlines():
        if end_block:
            if raw.startswith("." + end_block) or raw.startswith("'" + end_block):
                end_block = None
            continue
        if raw.startswith(('.\\"', "'\\\"", '\\"')):
            continue
        if raw.startswith((".", "'")):
            name, _, rest = raw[1:].strip().partition(" ")
            if name in _ROFF_DROP_BLOCKS:
                end_block = _ROFF_DROP_BLOCKS[name]
                continue
            if name in _ROFF_BREAK:
                out.append("")
            if name in _ROFF_FONT and rest.strip():
                glue = "" if name in _ROFF_ALTERNATING else " "  # .BR a b -> "ab" (fonts alternate)
                out.append(roff_escapes(_roff_args(rest, glue)))
                if name in ("SH", "SS", "IP"):
                    out.append("")
            continue
        out.append(roff_escapes(raw))
    return "\n".join(out)


# ---------------------------------------------------------------- fortunes and plain text

def fortunes(text: str) -> list[str]:
    """The fortunes in a fortune file ('%' lines separate them), overstrikes removed."""
    text = re.sub(r".\x08", "", text)  # "_\bx" / "x\bx" overstrike pairs
    return [f.strip("\n") for f in re.split(r"^%\s*$", text, flags=re.M) if f.strip()]


def fortune_text(fortune: str) -> str:
    """One fortune as prose: its paragraphs joined by newlines (line wraps removed)."""
    paras = paragraphs(fortune)
    return "\n".join(p for p in paras if p.startswith("-- ") or not is_code_like(p))  # keep "-- Author"


# ---------------------------------------------------------------- assembly

def documents(paras: list[str], size: int = DOC_CHARS) -> list[str]:
    """Consecutive paragraphs grouped into documents of about `size` characters."""
    docs, cur, n = [], [], 0
    for p in paras:
        if cur and n + len(p) > size:
            docs.append("\n".join(cur))
            cur, n = [], 0
        cur.append(p)
        n += len(p) + 1
    if cur:
        docs.append("\n".join(cur))
    return docs


def file_documents(src: Source, path: Path) -> list[str]:
    """The documents (before deduplication) that one file of a source yields."""
    text = read_any(path)
    if src.kind == "fortune":
        return [d for d in (fortune_text(f) for f in fortunes(text)) if d]
    raw = {"html": html_to_text, "roff": roff_to_text, "text": lambda s: s}[src.kind](text)
    return [raw]  # split into paragraphs (and deduplicated) by the caller


def source_files(src: Source, root: Path) -> list[Path]:
    """The files of a source inside its unpacked package, sorted (fortune indexes skipped)."""
    files = sorted(p for p in root.glob(src.pattern) if p.is_file())
    if src.kind == "fortune":
        files = [p for p in files if not p.suffix and p.name not in SKIP_FORTUNES]
    return files


def fetch(package: str, version: str, work: Path) -> tuple[Path, str]:
    """Download and unpack one package into work/; return (unpacked root, version actually used)."""
    debs = work / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    found = sorted(debs.glob(f"{package}_*.deb"))
    if not found:
        pinned = subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=debs,
                                capture_output=True, text=True)
        if pinned.returncode != 0:  # the archive moved on: take its current version, record it
            subprocess.run(["apt-get", "download", package], cwd=debs, check=True, capture_output=True)
        found = sorted(debs.glob(f"{package}_*.deb"))
    deb = found[-1]
    used = subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], check=True, capture_output=True,
                          text=True).stdout.strip()
    root = work / "unpacked" / package
    if not root.exists():
        tmp = root.with_suffix(".partial")
        tmp.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg", "-x", str(deb), str(tmp)], check=True)
        tmp.rename(root)
    return root, used


def collect(work: Path, log=print) -> tuple[list[dict], dict[str, str]]:
    """All documents as {"text", "lang", "source"} after cleaning and global paragraph dedup."""
    seen: set[str] = set()
    docs: list[dict] = []
    versions: dict[str, str] = {}
    for src in SOURCES:
        root, versions[src.package] = fetch(src.package, src.version, work)
        name = f"{src.package}:{src.lang}"
        n0 = len(docs)
        for path in source_files(src, root):
            kept = []
            for unit in file_documents(src, path):
                paras = [unit] if src.kind == "fortune" else prose(paragraphs(unit))
                for p in paras:
                    if language(p) not in (None, src.lang):  # untranslated text in a translation
                        continue
                    key = hashlib.sha1(p.lower().encode()).hexdigest()
                    if key not in seen:
                        seen.add(key)
                        kept.append(p)
            if src.kind == "fortune":
                docs += [{"text": f, "lang": src.lang, "source": name} for f in kept]
            else:
                docs += [{"text": d, "lang": src.lang, "source": name} for d in documents(kept)]
        log(f"{name}: {len(docs) - n0} documents")
    return docs, versions


def split(docs: list[dict], seed: int = SEED, test_fraction: float = TEST_FRACTION):
    """(train, test): the documents shuffled with a fixed seed, the last `test_fraction` held out."""
    docs = list(docs)
    random.Random(seed).shuffle(docs)
    n_test = max(1, round(len(docs) * test_fraction))
    return docs[:-n_test], docs[-n_test:]


def stats(parts: dict[str, list[dict]], tokens: dict[str, list[int]]) -> dict:
    """Documents, characters, words and tokens per split, per language and per source."""
    out = {}
    for split_name, docs in parts.items():
        rows: dict[str, dict] = {}
        for d, n_tok in zip(docs, tokens[split_name], strict=True):
            for key in ("all", f"lang:{d['lang']}", f"source:{d['source']}"):
                r = rows.setdefault(key, {"documents": 0, "chars": 0, "words": 0, "tokens": 0})
                r["documents"] += 1
                r["chars"] += len(d["text"])
                r["words"] += len(d["text"].split())
                r["tokens"] += n_tok
        for r in rows.values():
            r["chars_per_token"] = round(r["chars"] / max(1, r["tokens"]), 3)
        out[split_name] = dict(sorted(rows.items()))
    return out


def write_corpus(train: list[dict], test: list[dict], out: Path) -> dict:
    """Write the splits as JSON lines and uint16 token streams (documents joined by
    <|endoftext|>; per-language test streams too) plus both tokenizers; return token counts."""
    import numpy as np

    from lab.course import tokenizer as ct

    (out / "tokens").mkdir(parents=True, exist_ok=True)
    enc = ct.encoding()
    counts = {}
    for name, split_docs in (("train", train), ("test", test)):
        ids = enc.encode_ordinary_batch([d["text"] for d in split_docs])
        counts[name] = [len(x) for x in ids]
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for d in split_docs:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        streams = {"": ids}
        if name == "test":  # per-language held-out streams for per-language perplexity
            for lang in ("en", "pt"):
                streams[f"_{lang}"] = [x for x, d in zip(ids, split_docs, strict=True) if d["lang"] == lang]
        for suffix, seqs in streams.items():
            flat = [t for x in seqs for t in (*x, ct.EOT)]  # every document ends with <|endoftext|>
            np.save(out / "tokens" / f"{name}{suffix}.npy", np.asarray(flat, dtype=np.uint16))
    ct.save_tokenizers(out / "tokenizers")
    return counts


def build(out_dir: str | Path = "corpus", work_dir: str | Path = "build/corpus-work", log=print) -> dict:
    """Assemble, split, tokenize and describe the corpus; return the statistics written."""
    from lab.course import tokenizer as ct

    out, work = Path(out_dir), Path(work_dir)
    docs, versions = collect(work, log)
    train, test = split(docs)
    counts = write_corpus(train, test, out)
    result = {"seed": SEED, "test_fraction": TEST_FRACTION, "doc_chars": DOC_CHARS,
              "tokenizer": {"kind": "GPT-2 BPE, first merges", "n_merges": ct.N_MERGES,
                            "vocab_size": ct.VOCAB_SIZE, "eot_id": ct.EOT},
              "packages": versions, "splits": stats({"train": train, "test": test}, counts)}
    (out / "stats.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return result
