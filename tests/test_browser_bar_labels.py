"""Nothing of the lesson bar is cut at 1,280 x 720 (issue 56, item 4), in a real Chromium: with the sidebar open and
closed, in English and Portuguese, for the teacher (alone, in presentation mode, with a room, after a reload that
offers it back) and for a student following the room. Found on the old bar: a student's "← Ante…", "Próxi…",
"Seguindo o…", the teacher's "Mais" drawn as "M", "Retomar a sala 8LQ…" cutting the code the teacher must check,
"passo 1 de / 5" across two lines, the room's count on two lines."""

from __future__ import annotations

import re

import pytest

from lab import lessons
from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser

SCREEN = (1280, 720)
TIMEOUT = 90_000
LESSON = "05-layer-by-layer"  # its Portuguese title left "passo 1 de / 5" across two lines on the old bar
N = len(lessons.named(LESSON).steps)
WORDS = {"en": {"prev": "← Previous", "next": "Next →", "more": "More", "follow": "Following the teacher",
                "start": "Start a room", "back": "Take back room", "step": f"step 1 of {N}"},
         "pt": {"prev": "← Anterior", "next": "Próximo →", "more": "Mais", "follow": "Seguindo o professor",
                "start": "Abrir uma sala", "back": "Retomar a sala", "step": f"passo 1 de {N}"}}
# The bar's first row (title and counter, previous, next, the room, the menu): every label in it, whether its box cuts
# or spills its text (scrollWidth against clientWidth, the text's right edge against the window's), and on how
# many lines each label and the step counter lie (text nodes' line boxes, grouped by their top)
MEASURE = """(counter) => {
  const row = document.querySelector('.st-key-lesson-bar [data-testid="stHorizontalBlock"]');
  const texts = (el) => { const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT); const out = [];
    while (w.nextNode()) if (w.currentNode.textContent.trim()) out.push(w.currentNode); return out; };
  const boxes = (node, from = 0, to = node.textContent.length) => { const r = document.createRange();
    r.setStart(node, from); r.setEnd(node, to); return [...r.getClientRects()].filter(b => b.width > 0); };
  const lines = (rects) => { const tops = rects.map(b => b.top).sort((a, b) => a - b);
    return tops.filter((t, i) => i === 0 || t - tops[i - 1] > 8).length; };
  const columns = [...row.querySelectorAll(':scope > [data-testid="stColumn"]')];
  const labels = [], cut = [], wrapped = [];
  for (const column of columns.slice(1)) {
    for (const el of column.querySelectorAll('button, label, p')) {
      const text = el.innerText.trim();
      if (!text || !el.getBoundingClientRect().width) continue;
      if (el.matches('button, label') || !el.closest('button, label')) labels.push(text);
      const rects = texts(el).flatMap(n => boxes(n));
      if (el.matches('button, label') && lines(rects) > 1) wrapped.push(text);
      for (const inner of [el, ...el.querySelectorAll('*')]) {
        const box = inner.getBoundingClientRect();
        if (inner.innerText && inner.innerText.trim() && box.width && inner.scrollWidth > inner.clientWidth + 1
            && inner.clientWidth > 0) cut.push([text, inner.scrollWidth, inner.clientWidth]);
      }
      if (rects.some(b => b.right > innerWidth + 1)) cut.push([text, 'past the window']);
    }
  }
  let counterLines = 0;
  for (const node of texts(columns[0])) {
    const at = node.textContent.indexOf(counter);
    if (at >= 0) counterLines = lines(boxes(node, at, at + counter.length));
  }
  return {labels, cut: [...new Set(cut.map(c => JSON.stringify(c)))], wrapped, counter_lines: counterLines,
          bar_height: document.querySelector('.st-key-lesson-bar').getBoundingClientRect().height}; }"""
SIDEBAR = '[data-testid="stSidebar"][data-collapsed="{}"]'


def settled(page) -> None:
    """The run over, and the layout done moving (the sidebar slides, charts draw after the run)."""
    wait_idle(page, TIMEOUT)
    page.wait_for_timeout(700)


def sidebar(page, side: str) -> None:
    """The sidebar open or closed (presentation mode starts with it closed)."""
    collapsed = "true" if side == "closed" else "false"
    if page.locator(SIDEBAR.format(collapsed)).count():
        return
    if side == "closed":
        page.locator('[data-testid="stSidebar"]').hover()  # its collapse button shows on hover
        page.locator('[data-testid="stSidebarCollapseButton"] button').click()
    else:
        page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.wait_for_selector(SIDEBAR.format(collapsed), timeout=TIMEOUT)


def both_sides(page, lang: str, who: str, must: list[str], seen: list) -> None:
    """The bar measured with the sidebar open, then closed (then open again); each reading kept in `seen`."""
    for side in ("open", "closed"):
        sidebar(page, side)
        settled(page)
        m = page.evaluate(MEASURE, WORDS[lang]["step"])
        print(lang, who, side, m)  # the record
        missing = [w for w in must if not any(w in label for label in m["labels"])]
        seen.append((lang, who, side, m, missing))
    sidebar(page, "open")


def bar_says(page, text: str) -> None:
    page.wait_for_function("(t) => { const b = document.querySelector('.st-key-lesson-bar');"
                           " return b && b.innerText.includes(t); }", arg=text, timeout=TIMEOUT)
    settled(page)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_no_bar_label_is_cut_at_1280(app_url, lang):
    w, seen = WORDS[lang], []
    with chromium() as browser:
        teacher = new_page(browser, *SCREEN)
        teacher.goto(f"{app_url}/?lesson={LESSON}&step=1&lang={lang}&present=1")
        bar_says(teacher, w["step"])
        both_sides(teacher, lang, "teacher, presentation mode", [w["prev"], w["next"], w["start"], w["more"]], seen)
        teacher.goto(f"{app_url}/?lesson={LESSON}&step=1&lang={lang}")
        bar_says(teacher, w["start"])
        both_sides(teacher, lang, "teacher alone", [w["prev"], w["next"], w["start"], w["more"]], seen)
        teacher.locator(".st-key-room_start button:visible").click()
        teacher.wait_for_selector(".st-key-room-panel img", timeout=TIMEOUT)
        link = teacher.locator(".st-key-room-panel a").first.get_attribute("href")
        code = re.search(r"room=([A-Z0-9]{6})", link).group(1)
        settled(teacher)
        both_sides(teacher, lang, "teacher, a room and no student", [w["prev"], w["next"], code, w["more"]], seen)
        student = new_page(browser, *SCREEN)
        student.goto(link)
        bar_says(student, w["follow"])
        both_sides(student, lang, "student", [w["prev"], w["next"], f"{w['follow']}"], seen)
        bar_says(teacher, code)
        teacher.wait_for_selector(".st-key-room-panel", state="detached", timeout=TIMEOUT)  # folded: one follows
        settled(teacher)
        both_sides(teacher, lang, "teacher, a student following", [w["prev"], w["next"], code, w["more"]], seen)
        teacher.reload()
        bar_says(teacher, f"{w['back']} {code}")
        both_sides(teacher, lang, "teacher after a reload", [w["prev"], w["next"], f"{w['back']} {code}", w["more"]],
                   seen)
    bad = [(lang, who, side, m, missing) for lang, who, side, m, missing in seen
           if m["cut"] or m["wrapped"] or m["counter_lines"] != 1 or missing]
    assert not bad, bad
