"""Rooms: a class following the teacher's lesson (filled in with the room store)."""

from __future__ import annotations


def step(lesson) -> int | None:
    """The step the room this reader follows is on (None: no room, or not following)."""
    return None


def follower_bar(lesson, k: int) -> bool:
    """For a student in a room: the following switch; whether the bar's own moves are off."""
    return False


def teacher_panel(lesson, k: int) -> None:
    """For the teacher: start a room, its code, link and QR code."""
