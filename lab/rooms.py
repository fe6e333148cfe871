"""Rooms: a class following a teacher through a lesson (no Streamlit here; ui/rooms.py draws them).

A room is a short code, the lesson's name, the step the teacher is on, an expiry, and the hash of a secret that
only the teacher's session holds (never a link: the code is what students get). Nothing else is kept: no user
text, no names. Two stores with one behaviour:

- MemoryStore: a dict in this process (the default; one app process);
- RedisStore: one Redis (`LAB_ROOMS_URL=redis://host:6379/0`), so that a class spread over replicas sees one
  room. Each room is a hash `lab:room:CODE` with Redis's own expiry.

`store()` picks one from the environment. Every failure is a RoomError: an unknown or expired code, a code that
is not one, a wrong secret, Redis unreachable.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass

from lab.errors import LabError

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off a projector
CODE_LENGTH = 6
CODE = re.compile(f"[{ALPHABET}]{{{CODE_LENGTH}}}")
TTL_S = 3 * 3600  # a room lasts a class: three hours after it was started
MAX_STEP = 1000
ENV = "LAB_ROOMS_URL"
REDIS_TIMEOUT_S = 1.0  # a room must never hold a page up: Redis answers fast or not at all
PREFIX = "lab:room:"
PRESENT_S = 6.0  # a student counts as following while their page has read the room within this many seconds


def passing(e: RoomError) -> bool:
    """Whether a room error may pass by itself: the store did not answer this time (it may at the next read)."""
    return e.reason == "unreachable"


class RoomError(LabError):
    """A room that cannot be used. reasons: "not_a_code" (code), "no_room" (code: unknown or expired),
    "not_teacher" (code), "unreachable" (where: the store's address without its password)."""


@dataclass(frozen=True)
class Room:
    code: str
    lesson: str
    step: int
    expires: float  # seconds since the epoch


def normalise(code) -> str:
    """A code as students may type it (lower case, spaces) in its one form; RoomError when it cannot be one."""
    if not isinstance(code, str) or len(code) > 40:
        raise RoomError("not a room code", "not_a_code", code="")
    clean = re.sub(r"[\s-]", "", code).upper()
    if not CODE.fullmatch(clean):
        raise RoomError(f"not a room code: {code[:12]!r}", "not_a_code", code=code[:12])
    return clean


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _check_step(step) -> int:
    if not isinstance(step, int) or isinstance(step, bool) or not 1 <= step <= MAX_STEP:
        raise RoomError(f"not a step: {step!r}", "not_a_code", code="")
    return step


class MemoryStore:
    """Rooms in this process's memory (a lock around a dict); `clock` for tests."""

    def __init__(self, clock=time.time):
        self.clock, self._rooms, self._lock, self._seen = clock, {}, threading.Lock(), {}

    def create(self, lesson: str, step: int, ttl_s: float = TTL_S) -> tuple[Room, str]:
        """A new room on `step` of `lesson`: (the room, the teacher's secret)."""
        secret, expires = secrets.token_urlsafe(24), self.clock() + ttl_s
        with self._lock:
            self._rooms = {c: r for c, r in self._rooms.items() if r[0].expires > self.clock()}  # drop expired
            code = _new_code(lambda c: c in self._rooms)
            room = Room(code, lesson, _check_step(step), expires)
            self._rooms[code] = (room, _digest(secret))
        return room, secret

    def get(self, code: str) -> Room:
        """The room `code` (RoomError: not a code, unknown, expired)."""
        code = normalise(code)
        with self._lock:
            found = self._rooms.get(code)
        if found is None or found[0].expires <= self.clock():
            raise RoomError(f"no room {code} (unknown or expired)", "no_room", code=code)
        return found[0]

    def move(self, code: str, secret: str, step: int) -> Room:
        """The teacher moves the room to `step` (RoomError: not the teacher's secret, no such room)."""
        room = self.claim(code, secret)
        with self._lock:
            moved = Room(room.code, room.lesson, _check_step(step), room.expires)
            self._rooms[room.code] = (moved, self._rooms[room.code][1])
        return moved

    def claim(self, code: str, secret: str) -> Room:
        """The room, for its teacher only (RoomError "not_teacher" for another secret): a teacher taking it back."""
        room = self.get(code)
        with self._lock:
            if not hmac.compare_digest(self._rooms[room.code][1], _digest(secret)):
                raise RoomError(f"not the teacher of room {room.code}", "not_teacher", code=room.code)
        return room

    def close(self, code: str, secret: str) -> None:
        """The teacher ends the room: students' links say it is over."""
        room = self.claim(code, secret)
        with self._lock:
            self._rooms.pop(room.code, None)
            self._seen.pop(room.code, None)

    def seen(self, code: str, who: str) -> None:
        """A student's page read the room now (`who`: a random id of their browser session, no name)."""
        now = self.clock()
        with self._lock:
            if code in self._rooms:
                self._seen.setdefault(code, {})[who] = now

    def following(self, code: str) -> int:
        """How many students' pages read the room within the last PRESENT_S seconds."""
        now = self.clock()
        with self._lock:
            seen = {w: s for w, s in self._seen.get(code, {}).items() if s > now - PRESENT_S}
            self._seen[code] = seen
        return len(seen)


class RedisStore:
    """Rooms in Redis: one hash per room, expiring with it."""

    def __init__(self, url: str):
        import redis

        self.where = re.sub(r"//[^@/]*@", "//", url)  # never the password in a message
        self.client = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S,
                                           socket_connect_timeout=REDIS_TIMEOUT_S, decode_responses=True)

    def _call(self, fn):
        import redis

        try:
            return fn()
        except redis.RedisError as e:
            raise RoomError(f"the room store at {self.where} cannot be reached ({type(e).__name__})",
                            "unreachable", where=self.where) from None

    def create(self, lesson: str, step: int, ttl_s: float = TTL_S) -> tuple[Room, str]:
        secret, expires = secrets.token_urlsafe(24), time.time() + ttl_s
        fields = {"lesson": lesson, "step": _check_step(step), "expires": expires, "secret": _digest(secret)}
        for _ in range(20):
            code = _new_code(lambda c: False)
            made = self._call(lambda c=code: self._create(c, fields, ttl_s))
            if made:
                return Room(code, lesson, step, expires), secret
        raise RoomError("no free room code", "unreachable", where=self.where)

    def _create(self, code: str, fields: dict, ttl_s: float) -> bool:
        """Claim `code` (a placeholder set only when absent), then fill it; False when the code was taken."""
        key = PREFIX + code
        if not self.client.set(key + ":claim", "1", nx=True, ex=int(ttl_s) + 1):
            return False
        pipe = self.client.pipeline()
        pipe.hset(key, mapping=fields)
        pipe.expire(key, int(ttl_s))
        pipe.execute()
        return True

    def _fields(self, code: str) -> dict:
        code = normalise(code)
        fields = self._call(lambda: self.client.hgetall(PREFIX + code))
        if not fields or float(fields["expires"]) <= time.time():
            raise RoomError(f"no room {code} (unknown or expired)", "no_room", code=code)
        return fields | {"code": code}

    def get(self, code: str) -> Room:
        f = self._fields(code)
        return Room(f["code"], f["lesson"], int(f["step"]), float(f["expires"]))

    def move(self, code: str, secret: str, step: int) -> Room:
        room = self.claim(code, secret)
        self._call(lambda: self.client.hset(PREFIX + room.code, "step", _check_step(step)))
        return Room(room.code, room.lesson, step, room.expires)

    def claim(self, code: str, secret: str) -> Room:
        f = self._fields(code)
        if not hmac.compare_digest(f["secret"], _digest(secret)):
            raise RoomError(f"not the teacher of room {f['code']}", "not_teacher", code=f["code"])
        return Room(f["code"], f["lesson"], int(f["step"]), float(f["expires"]))

    def close(self, code: str, secret: str) -> None:
        room = self.claim(code, secret)
        self._call(lambda: self.client.delete(PREFIX + room.code, PREFIX + room.code + ":seen"))

    def seen(self, code: str, who: str) -> None:
        key, now = PREFIX + normalise(code) + ":seen", time.time()
        pipe = self.client.pipeline()
        pipe.zadd(key, {who: now})
        pipe.zremrangebyscore(key, "-inf", now - PRESENT_S)
        pipe.expire(key, TTL_S)
        self._call(pipe.execute)

    def following(self, code: str) -> int:
        key, now = PREFIX + normalise(code) + ":seen", time.time()
        return int(self._call(lambda: self.client.zcount(key, now - PRESENT_S, "+inf")))


def _new_code(taken) -> str:
    """A random code that `taken` does not reject."""
    while True:
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
        if not taken(code):
            return code


_memory = MemoryStore()
_redis: dict[str, RedisStore] = {}


def store(url: str | None = None):
    """The rooms' store: Redis when LAB_ROOMS_URL (or `url`) is a redis:// address, else this process's memory."""
    url = url if url is not None else os.environ.get(ENV, "")
    if not url:
        return _memory
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise RoomError(f"{ENV} must be a redis:// address", "unreachable", where=url.split("@")[-1][:60])
    if url not in _redis:
        _redis[url] = RedisStore(url)
    return _redis[url]
