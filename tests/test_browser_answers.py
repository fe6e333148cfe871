"""A class answering in a real Chromium (issue 52, ui/answers.py): one teacher, five students, each its own browser
context (its own session): the views hidden until the reveal, the teacher's count, the reveal reaching every
student's screen through the room's poll, a second round, and the teacher's CSV downloaded and read."""

from __future__ import annotations

import csv
import io
import re

import pytest

from lab import lessons, questions
from tests.streamlit_server import chromium, new_page, wait_idle

pytestmark = pytest.mark.browser
LESSON, STEP = "01-tokens-and-embeddings", 3  # a number: GPT-2's tokens of a Portuguese sentence
TIMEOUT = 90_000
ANSWERS = ["20", "24", "24", "30", "24,0"]  # "24,0": a Portuguese decimal comma, read as 24


def views_hidden(page) -> bool:
    """Whether none of the page's views reached the browser (the page withheld until the reveal)."""
    return page.locator('[class*="st-key-view-"]').count() == 0 and page.locator("h1").count() == 0


def send(page, value: str, keyboard: bool = False) -> None:
    """Answer `value`: typed and sent with the mouse, or with the keyboard alone (Tab to the box, type, Enter)."""
    box = page.get_by_label(re.compile("Your answer"))
    if keyboard:
        page.locator("body").focus()
        for _ in range(60):  # Tab through the page until the answer box has the focus
            page.keyboard.press("Tab")
            if box.evaluate("(e) => e === document.activeElement"):
                break
        page.keyboard.type(value)
        page.keyboard.press("Enter")
    else:
        box.fill(value)
        page.get_by_role("button", name="Send my answer").click()
    page.get_by_text(re.compile(r"Your answer: `?" + re.escape(value.replace(",0", "")))).first.wait_for(
        timeout=TIMEOUT)


def press(page, name: str) -> None:
    page.get_by_role("button", name=name).click()
    wait_idle(page, TIMEOUT)


def test_five_students_answer_two_rounds_and_see_the_reveal(app_url, tmp_path):
    truth = questions.model_side(lessons.named(LESSON).steps[STEP - 1].question, None)["value"]
    with chromium() as browser:
        teacher = new_page(browser)
        teacher.goto(f"{app_url}/?lesson={LESSON}&step={STEP}")
        teacher.get_by_text(f"step {STEP} of 6").first.wait_for(timeout=TIMEOUT)
        wait_idle(teacher, TIMEOUT)
        teacher.locator(".st-key-room_start button:visible").click()
        teacher.wait_for_selector(".st-key-room-panel img", timeout=TIMEOUT)
        code = re.search(r"Room ([A-Z0-9]{6}),", teacher.locator(".st-key-room-panel").inner_text()).group(1)
        students = [new_page(browser, 1280, 720) for _ in ANSWERS]
        for s, value in zip(students, ANSWERS, strict=True):
            s.goto(f"{app_url}/?room={code}&lang=en")
            s.get_by_role("button", name="Send my answer").wait_for(timeout=TIMEOUT)
            wait_idle(s, TIMEOUT)
            assert views_hidden(s)
            send(s, value, keyboard=s is students[-1])  # the last student uses the keyboard alone
        assert views_hidden(teacher)  # the projector shows the teacher's screen
        students[0].reload()  # the same browser: its id is kept (a cookie), so the answer changes, not adds
        students[0].get_by_text(re.compile(r"Your answer: 20\.")).wait_for(timeout=TIMEOUT)
        wait_idle(students[0], TIMEOUT)
        send(students[0], "30")
        teacher.get_by_text(f"{len(ANSWERS)} answered").wait_for(timeout=TIMEOUT)  # the count, read every 2 s
        press(teacher, "Reveal")
        said = f"The true value: {truth:,}."
        for page in [teacher, *students]:  # the students' poll reruns their page within about a second
            page.get_by_text(said).wait_for(timeout=TIMEOUT)
            wait_idle(page, TIMEOUT)
            assert not views_hidden(page)
        press(teacher, "Vote again")
        for s in students:
            s.get_by_text("Round 2.").first.wait_for(timeout=TIMEOUT)
            wait_idle(s, TIMEOUT)
            send(s, str(truth))
        teacher.get_by_text(f"{len(ANSWERS)} answered · round 2").wait_for(timeout=TIMEOUT)
        press(teacher, "Reveal")
        students[0].get_by_text(f"{2 * len(ANSWERS)} answers in 2 rounds.").wait_for(timeout=TIMEOUT)
        with teacher.expect_download(timeout=TIMEOUT) as got:
            teacher.get_by_role("button", name="Answers (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(got.value.path().read_text(encoding="utf-8"))))
        assert {(r["round"], r["answer"], r["count"]) for r in rows} == {
            ("1", "24", "3"), ("1", "30", "2"), ("2", str(truth), "5")}
        assert all(float(r["true_value"]) == truth for r in rows)
        teacher.reload()  # the teacher's tab reloads: this browser takes its room back, the answers still there
        teacher.get_by_role("button", name=f"Take back room {code}").click()
        teacher.get_by_text(f"{len(ANSWERS)} answered · round 2").wait_for(timeout=TIMEOUT)
        teacher.get_by_text(said).wait_for(timeout=TIMEOUT)
        assert not any(p.dialogs for p in [teacher])
