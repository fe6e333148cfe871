"""A room across two app processes sharing one real redis-server (LAB_ROOMS_URL): the teacher on one, a student
on the other, as a class spread over replicas would be. Each server and the redis-server bind 127.0.0.1 on a free
port and stop at the end."""

from __future__ import annotations

import pytest

from tests.pages import APP
from tests.streamlit_server import chromium, new_page, require_browser, streamlit_server
from tests.test_browser_lessons import at_step, start_room
from tests.test_rooms import redis_url  # noqa: F401  (the fixture: a real redis-server for this module)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_room_spans_two_app_processes_through_redis(redis_url):  # noqa: F811
    require_browser()
    env = {"HF_HUB_OFFLINE": "1", "LAB_ROOMS_URL": redis_url}
    with streamlit_server(APP, env=env) as one, streamlit_server(APP, env=env) as two, chromium() as browser:
        teacher = new_page(browser)
        code = start_room(teacher, one)
        student = new_page(browser)
        student.goto(f"{two}/?room={code}")  # the other replica
        at_step(student, 1)
        teacher.keyboard.press("PageDown")
        at_step(teacher, 2)
        at_step(student, 2)
        assert "attn_layer=2" in student.url and f"room={code}" in student.url
        assert "Following the teacher" in student.locator(".st-key-lesson-bar").inner_text()
