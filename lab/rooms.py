"""Rooms: a class following a teacher through a lesson (no Streamlit here; ui/rooms.py draws them).

A room is a short code, the lesson's name, the step the teacher is on, an expiry, and the hash of a secret that
only the teacher's session holds (never a link: the code is what students get). The secret is itself a code the
teacher can type back (12 letters and digits of ALPHABET, 60 bits; `teacher_key` writes it "ABCD-EFGH-JKLM"):
`claim_by_key` takes a room back from it, and refuses every try once MAX_WRONG_KEYS wrong keys were typed for
the room. The store keeps its hash only, never the secret or the key.

One teacher at a time (issue 56): the key stays the room's for its whole life (the file the teacher keeps), but each
take-back by key gives the new session its own secret, "KEY.HOLDER" (the key, then a random holder token), and the
room keeps the hash of the current holder only. The session that held the room before still has the right key but
not the current holder: each of its moves, closes and reveals is refused with "taken_back" (not "not_teacher"), so
its page can say the room was taken back elsewhere. The room's creator holds it with the bare key (no holder yet).

Answers (issue 52): each step of a room has one or two rounds (`Round`: the first open as soon as the step is
shown; "vote again" opens the second, the first kept). A student's answer is a short text filed under `who`, a
random id of their browser session (no name); one answer per `who` per round, replaced when they answer again,
refused once the teacher closed or revealed the round. The ids never leave the store: only counts do. Answers
live and expire with their room; `close()` removes them.

Two stores with one behaviour, written once in their base `Store` (the checks, the ids, the wording), each keeping
the rooms its own way:

- MemoryStore: a dict in this process (the default; one app process);
- RedisStore: one Redis (`LAB_ROOMS_URL=redis://host:6379/0`), so that a class spread over replicas sees one
  room. Each room is a hash `lab:room:CODE` with Redis's own expiry; beside it `:claim` (the code taken),
  `:seen` (students following), `:fails` (wrong keys typed), `:round:STEP` (a hash: number, open, revealed),
  `:answers:STEP:N` (a hash: who -> answer) and `:keys` (the set of the round and answer keys), all expiring
  with the room. Writes that check a round's state (an answer, closing, revealing, voting again, closing the
  room) are one Lua script each, so two students answering while the teacher closes the round never disagree; so
  are the teacher's writes (moving, closing, turning a round: the secret and the holder checked where the write is
  made) and the take-back by key (the try counted, the key checked, the new holder written), so a session whose
  room was just taken back never lands one more move. The room's hash holds `holder` once a key took it back.

`store()` picks one from the environment. Every failure is a RoomError: an unknown or expired code, a code that
is not one, a wrong secret, a secret whose room was taken back by key, a wrong key, an answer to a closed round,
Redis unreachable.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass, replace

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
KEY_LENGTH = 12  # the teacher's secret: 12 characters of ALPHABET, 60 bits
KEY = re.compile(f"[{ALPHABET}]{{{KEY_LENGTH}}}")
MAX_WRONG_KEYS = 20  # typed teacher keys a room accepts wrong before it refuses every key
MAX_ANSWER, MAX_WHO = 100, 64  # characters
ROUNDS = 2  # a question is answered once, then at most once again


def passing(e: RoomError) -> bool:
    """Whether a room error may pass by itself: the store did not answer this time (it may at the next read)."""
    return e.reason == "unreachable"


class RoomError(LabError):
    """A room that cannot be used. reasons: "not_a_code" (code), "no_room" (code: unknown or expired),
    "not_teacher" (code), "taken_back" (code: the teacher's key took the room back in another session, after this
    one's secret was given), "wrong_key" (code, wrong: a typed key that is not the room's; the count of wrong keys
    so far), "too_many_keys" (code, wrong: MAX_WRONG_KEYS wrong keys were typed, every key is refused),
    "unreachable" (where: the store's address without its password), "closed" (code, step:
    an answer to a round the teacher closed or revealed), "no_more_rounds" (code, step: "vote again" on a second
    round), "not_an_answer" (an answer that is not 1-100 characters of text, or a `who` that is not 1-64: the
    caller cleans answers first, so a reader never meets it)."""


@dataclass(frozen=True)
class Round:
    """The current round of a step's question: its number (1, or 2 after "vote again"), whether students may still
    answer (open), whether the teacher showed the answer (revealed: closed too)."""

    step: int
    number: int
    open: bool
    revealed: bool


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


def _check_number(number) -> int:
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= ROUNDS:
        raise RoomError(f"not a round: {number!r}", "not_a_code", code="")
    return number


def _check_answer(who, value) -> None:
    """RoomError "not_an_answer" unless `value` is 1-100 characters of text and `who` 1-64."""
    for what, v, most in (("answer", value, MAX_ANSWER), ("student id", who, MAX_WHO)):
        if not isinstance(v, str) or not 1 <= len(v) <= most:
            shown = len(v) if isinstance(v, str) else type(v).__name__
            raise RoomError(f"not an {what}: {shown!r} (1 to {most} characters)", "not_an_answer", most=most)


def _new_secret() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(KEY_LENGTH))


def _typed_key(key) -> str:
    """A teacher's key as typed (spaces, dashes, lower case) in its one form, or "" when it cannot be one."""
    clean = re.sub(r"[\s-]", "", key).upper() if isinstance(key, str) and len(key) <= 60 else ""
    return clean if KEY.fullmatch(clean) else ""


def _parts(secret) -> tuple[str, str]:
    """(key, holder token) of a session's secret: "KEY" (the room's creator) or "KEY.HOLDER" (a take-back by key)."""
    key, _, holder = secret.partition(".") if isinstance(secret, str) else ("", "", "")
    return key, holder


def _holder_digest(holder: str) -> str:
    """What the room keeps of a holder token: its hash; "" for the creator's session (no token)."""
    return _digest(holder) if holder else ""


def _teacher(code: str, digest: str, holder: str, secret) -> None:
    """RoomError unless `secret` is the session that holds room `code` now (`digest`: its key's hash; `holder`: the
    current holder's hash, "" while the creator holds it): "not_teacher" for another secret, "taken_back" for the
    right key from a session that the key has since replaced."""
    key, token = _parts(secret)
    if not key or not hmac.compare_digest(digest, _digest(key)):
        raise _not_teacher(code)
    if not hmac.compare_digest(holder, _holder_digest(token)):
        raise _taken_back(code) if holder else _not_teacher(code)  # no holder yet: a token nobody was given


def _not_teacher(code: str) -> RoomError:
    return RoomError(f"not the teacher of room {code}", "not_teacher", code=code)


class TakenBack(RoomError):
    """RoomError "taken_back": this session's secret held the room until its key took it back elsewhere (a page tells it
    apart by its class, and then follows the room as a viewer)."""


def _taken_back(code: str) -> RoomError:
    return TakenBack(f"room {code} was taken back with its key in another session", "taken_back", code=code)


def _wrong_key(code: str, wrong: int) -> RoomError:
    if wrong > MAX_WRONG_KEYS:
        return RoomError(f"room {code}: {MAX_WRONG_KEYS} wrong keys were typed, no key is taken any more",
                         "too_many_keys", code=code, wrong=wrong)
    return RoomError(f"not the teacher key of room {code}", "wrong_key", code=code, wrong=wrong)


def teacher_key(secret: str) -> str:
    """The teacher's key as they would type it back, "ABCD-EFGH-JKLM", from a session's secret (its key part; a
    RoomError "not_teacher" for a secret not made here)."""
    clean = _typed_key(_parts(secret)[0]) if isinstance(secret, str) and len(secret) <= 60 else ""
    if not clean:
        raise RoomError("not a teacher's secret", "not_teacher", code="")
    return "-".join(clean[i:i + 4] for i in range(0, KEY_LENGTH, 4))


def _fresh(step: int) -> Round:
    """A step nobody touched: round 1, open (students may answer as soon as the step is shown)."""
    return Round(step, 1, True, False)


def _turned(round_: Round, turn: str, code: str) -> Round:
    """`round_` after the teacher's `turn`: "close", "reveal" or "again" (RoomError "no_more_rounds")."""
    if turn == "again":
        if round_.number >= ROUNDS:
            raise _no_more_rounds(code, round_.step)
        return Round(round_.step, round_.number + 1, True, False)
    return replace(round_, open=False, revealed=round_.revealed or turn == "reveal")


def _gone(code: str) -> RoomError:
    return RoomError(f"no room {code} (unknown or expired)", "no_room", code=code)


def _refused(code: str, step: int) -> RoomError:
    return RoomError(f"room {code}, step {step}: the round is closed", "closed", code=code, step=step)


def _no_more_rounds(code: str, step: int) -> RoomError:
    return RoomError(f"room {code}, step {step}: no round after the second", "no_more_rounds", code=code, step=step)


def _refusal(reason: str, code: str, step: int = 0) -> RoomError:
    """The one RoomError for a refusal named by its reason code (how a Redis script answers)."""
    return {"no_room": lambda: _gone(code), "not_teacher": lambda: _not_teacher(code),
            "taken_back": lambda: _taken_back(code), "closed": lambda: _refused(code, step),
            "no_more_rounds": lambda: _no_more_rounds(code, step)}[reason]()


class Store:
    """What both stores do, written once: the arguments checked (a code in its one form, a step, a round's number,
    an answer and its `who`) before the store is asked, the ids made (the teacher's secret, a take-back's holder
    token), the teacher's check made first (and again by the store where the write is made), the answers turned
    into counts (ids never leave), every refusal worded by one function. Each store keeps the rooms its own way,
    given normalised and checked arguments: `_create`, `_held`, `_move`, `_take_back`, `_close`, `_mark_seen`,
    `_count_following`, `_round`, `_answer`, `_answers_in`, `_turn`."""

    clock = staticmethod(time.time)

    def create(self, lesson: str, step: int, ttl_s: float = TTL_S) -> tuple[Room, str]:
        """A new room on `step` of `lesson`: (the room, the teacher's secret: `teacher_key` writes it to type)."""
        secret, step = _new_secret(), _check_step(step)
        return self._create(lesson, step, self.clock() + ttl_s, _digest(secret), ttl_s), secret

    def get(self, code: str) -> Room:
        """The room `code` (RoomError: not a code, unknown, expired)."""
        return self._held(normalise(code))[0]

    def claim(self, code: str, secret: str) -> Room:
        """The room, for the session holding it only (RoomError "not_teacher" for another secret, "taken_back" for
        a session the teacher's key has replaced since): a teacher taking it back after a reload, or checking."""
        code = normalise(code)
        room, digest, holder = self._held(code)
        _teacher(code, digest, holder, secret)
        return room

    def move(self, code: str, secret: str, step: int) -> Room:
        """The teacher moves the room to `step` (RoomError: not the teacher's secret, taken back, no such room)."""
        code, step = normalise(code), _check_step(step)
        room = self.claim(code, secret)
        self._move(room, secret, step)
        return replace(room, step=step)

    def claim_by_key(self, code: str, key: str) -> tuple[Room, str]:
        """The teacher takes the room back by typing their key (any case, spaces or dashes): (the room, the secret
        to keep in their session: the key and a new holder token, which ends the session that held the room until
        now). RoomError "wrong_key" for a wrong key, and "too_many_keys" for every key once MAX_WRONG_KEYS wrong
        ones were typed for this room (the try counted, the key checked, the holder written in one step)."""
        code, typed, token = normalise(code), _typed_key(key), secrets.token_hex(10)
        room = self._take_back(code, _digest(typed) if typed else "", _holder_digest(token))
        return room, f"{typed}.{token}"

    def close(self, code: str, secret: str) -> None:
        """The teacher ends the room: students' links say it is over; its answers are gone."""
        room = self.claim(code, secret)
        self._close(room.code, secret)

    def seen(self, code: str, who: str) -> None:
        """A student's page read the room now (`who`: a random id of their browser session, no name)."""
        self._mark_seen(normalise(code), who, self.clock())

    def following(self, code: str) -> int:
        """How many students' pages read the room within the last PRESENT_S seconds."""
        return self._count_following(normalise(code), self.clock())

    def round_of(self, code: str, step: int) -> Round:
        """The current round of `step`'s question (a step nobody touched: round 1, open)."""
        return self._round(normalise(code), _check_step(step))

    def answer(self, code: str, who: str, step: int, value: str) -> None:
        """File `who`'s answer in `step`'s current round, replacing theirs (RoomError "closed" once it is closed)."""
        code, step = normalise(code), _check_step(step)
        _check_answer(who, value)
        self._answer(code, who, step, value)

    def _ids(self, code: str, step: int, number: int | None) -> dict[str, str]:
        """{who: answer} in round `number` of `step` (None: the current round): never returned to a caller."""
        code, step = normalise(code), _check_step(step)
        return self._answers_in(code, step, None if number is None else _check_number(number))

    def mine(self, code: str, who: str, step: int) -> str | None:
        """`who`'s answer in `step`'s current round, or None."""
        return self._ids(code, step, None).get(who)

    def answers(self, code: str, step: int, number: int | None = None) -> dict[str, int]:
        """{answer: how many gave it} in round `number` of `step` (default: the current round); no ids."""
        return dict(Counter(self._ids(code, step, number).values()))

    def answered(self, code: str, step: int) -> int:
        """How many students answered `step`'s current round."""
        return len(self._ids(code, step, None))

    def _turning(self, code: str, secret: str, step: int, turn: str) -> Round:
        code, step = normalise(code), _check_step(step)
        room = self.claim(code, secret)
        return self._turn(room.code, secret, step, turn)

    def close_round(self, code: str, secret: str, step: int) -> Round:
        """The teacher closes `step`'s current round: answers are refused from now on."""
        return self._turning(code, secret, step, "close")

    def reveal(self, code: str, secret: str, step: int) -> Round:
        """The teacher shows the answer: the round is closed and revealed."""
        return self._turning(code, secret, step, "reveal")

    def again(self, code: str, secret: str, step: int) -> Round:
        """"Vote again": round 2 opens, round 1's answers kept (RoomError "no_more_rounds" from round 2)."""
        return self._turning(code, secret, step, "again")


class MemoryStore(Store):
    """Rooms in this process's memory (a lock around dicts); `clock` for tests."""

    def __init__(self, clock=time.time):
        self.clock, self._rooms, self._lock, self._seen = clock, {}, threading.Lock(), {}
        self._rounds: dict[str, dict[int, Round]] = {}  # code -> step -> its current round (absent: _fresh)
        self._answers: dict[str, dict[tuple[int, int], dict[str, str]]] = {}  # code -> (step, number) -> who -> answer
        self._wrong: dict[str, int] = {}  # code -> wrong teacher keys typed
        self._holders: dict[str, str] = {}  # code -> the hash of the holder token of the session teaching it

    def _create(self, lesson: str, step: int, expires: float, digest: str, ttl_s: float) -> Room:
        with self._lock:
            self._drop_expired()
            code = _new_code(lambda c: c in self._rooms)
            room = Room(code, lesson, step, expires)
            self._rooms[code] = (room, digest)
        return room

    def _drop_expired(self) -> None:
        """(Under the lock.) Forget the rooms past their expiry, with everything kept beside them."""
        now = self.clock()
        self._rooms = {c: r for c, r in self._rooms.items() if r[0].expires > now}
        for kept in (self._seen, self._rounds, self._answers, self._wrong, self._holders):
            for code in [c for c in kept if c not in self._rooms]:
                del kept[code]

    def _kept(self, code: str) -> tuple[Room, str]:
        """(Under the lock.) (room, its secret's hash) of the normalised `code`; RoomError "no_room"."""
        found = self._rooms.get(code)
        if found is None or found[0].expires <= self.clock():
            raise _gone(code)
        return found

    def _held(self, code: str) -> tuple[Room, str, str]:
        with self._lock:
            room, digest = self._kept(code)
            return room, digest, self._holders.get(code, "")

    def _taught(self, code: str, secret: str) -> Room:
        """(Under the lock.) The room `code`, for the session holding it only (see `_teacher`)."""
        room, digest = self._kept(code)
        _teacher(code, digest, self._holders.get(code, ""), secret)
        return room

    def _current(self, code: str, step: int) -> Round:
        """(Under the lock.) The current round of `step`."""
        return self._rounds.get(code, {}).get(step) or _fresh(step)

    def _move(self, room: Room, secret: str, step: int) -> None:
        with self._lock:
            now = self._taught(room.code, secret)
            self._rooms[room.code] = (replace(now, step=step), self._rooms[room.code][1])

    def _take_back(self, code: str, typed: str, holder: str) -> Room:
        with self._lock:
            room, digest = self._kept(code)
            wrong = self._wrong.get(code, 0)
            if wrong >= MAX_WRONG_KEYS or not typed or not hmac.compare_digest(digest, typed):
                self._wrong[code] = wrong + 1
                raise _wrong_key(code, wrong + 1)
            self._holders[code] = holder
        return room

    def _close(self, code: str, secret: str) -> None:
        with self._lock:
            self._taught(code, secret)
            for kept in (self._rooms, self._seen, self._rounds, self._answers, self._wrong, self._holders):
                kept.pop(code, None)

    def _mark_seen(self, code: str, who: str, now: float) -> None:
        with self._lock:
            if code in self._rooms:
                self._seen.setdefault(code, {})[who] = now

    def _count_following(self, code: str, now: float) -> int:
        with self._lock:
            seen = {w: s for w, s in self._seen.get(code, {}).items() if s > now - PRESENT_S}
            self._seen[code] = seen
        return len(seen)

    def _round(self, code: str, step: int) -> Round:
        with self._lock:
            self._kept(code)
            return self._current(code, step)

    def _answer(self, code: str, who: str, step: int, value: str) -> None:
        with self._lock:
            self._kept(code)
            now = self._current(code, step)
            if not now.open or now.revealed:
                raise _refused(code, step)
            self._answers.setdefault(code, {}).setdefault((step, now.number), {})[who] = value

    def _answers_in(self, code: str, step: int, number: int | None) -> dict[str, str]:
        with self._lock:
            self._kept(code)
            number = self._current(code, step).number if number is None else number
            return dict(self._answers.get(code, {}).get((step, number), {}))

    def _turn(self, code: str, secret: str, step: int, turn: str) -> Round:
        with self._lock:
            self._taught(code, secret)
            turned = _turned(self._current(code, step), turn, code)
            self._rounds.setdefault(code, {})[step] = turned
        return turned


# The teacher's check, where a teacher's write is made (see `_teacher`): the room's hash `room`, the hash of the
# secret's key, the hash of its holder token ("" for the creator's session). nil when this session holds the room.
_LUA_TEACHER = """
local function teacher(room, key, holder)
  local f = redis.call('HMGET', room, 'secret', 'holder')
  if not f[1] then return 'no_room' end
  if f[1] ~= key then return 'not_teacher' end
  local now = f[2] or ''
  if now ~= holder then
    if now == '' then return 'not_teacher' end
    return 'taken_back'
  end
  return nil
end
"""
# The Redis writes that check a round's state, each one script (atomic): KEYS[1] the room's hash, KEYS[2] the step's
# round hash, KEYS[3] the set of the room's round and answer keys; every key they make expires with the room.
_LUA_KEEP = """
local function keep(key)
  redis.call('SADD', KEYS[3], key)
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', key, ttl); redis.call('PEXPIRE', KEYS[3], ttl) end
end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'no_room'} end
local r = redis.call('HMGET', KEYS[2], 'number', 'open', 'revealed')
local number, open, revealed = r[1] or '1', r[2] or '1', r[3] or '0'
"""
ANSWER_LUA = _LUA_KEEP + """
if open ~= '1' or revealed == '1' then return {'closed'} end
local answers = ARGV[1] .. number
redis.call('HSET', answers, ARGV[2], ARGV[3])
keep(answers)
return {'ok', number}
"""  # ARGV: the answers' key less its round number, who, the answer
TURN_LUA = _LUA_TEACHER + _LUA_KEEP + """
local refused = teacher(KEYS[1], ARGV[3], ARGV[4])
if refused then return {refused} end
if ARGV[1] == 'again' then
  if tonumber(number) >= tonumber(ARGV[2]) then return {'no_more_rounds'} end
  number, open, revealed = tostring(tonumber(number) + 1), '1', '0'
else
  open = '0'
  if ARGV[1] == 'reveal' then revealed = '1' end
end
redis.call('HSET', KEYS[2], 'number', number, 'open', open, 'revealed', revealed)
keep(KEYS[2])
return {'ok', number, open, revealed}
"""  # ARGV: "close", "reveal" or "again"; ROUNDS; the teacher's key hash and holder hash
CLOSE_LUA = _LUA_TEACHER + """
local refused = teacher(KEYS[2], ARGV[1], ARGV[2])
if refused then return {refused} end
local kept = redis.call('SMEMBERS', KEYS[1])
for _, key in ipairs(kept) do redis.call('DEL', key) end
return {'ok', redis.call('DEL', unpack(KEYS))}
"""  # KEYS: the set of round and answer keys, then the room's hash and its other keys; ARGV: the teacher's hashes
MOVE_LUA = _LUA_TEACHER + """
local refused = teacher(KEYS[1], ARGV[2], ARGV[3])
if refused then return {refused} end
redis.call('HSET', KEYS[1], 'step', ARGV[1])
return {'ok'}
"""  # KEYS: the room's hash; ARGV: the step, the teacher's key hash and holder hash
CLAIM_LUA = """
local f = redis.call('HMGET', KEYS[1], 'secret')
if not f[1] then return {'no_room'} end
local tries = redis.call('INCR', KEYS[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl + 1000) end
if tries > tonumber(ARGV[3]) or ARGV[1] == '' or ARGV[1] ~= f[1] then return {'wrong', tries} end
redis.call('DECR', KEYS[2])
redis.call('HSET', KEYS[1], 'holder', ARGV[2])
return {'ok', tries}
"""  # KEYS: the room's hash, its count of wrong keys; ARGV: the typed key's hash ("": not a key), the new holder's
# hash, MAX_WRONG_KEYS. A try counts before it is checked and is given back when right, so that no more than
# MAX_WRONG_KEYS wrong keys are ever checked, however many are typed at once.


def _round_from(step: int, state) -> Round:
    """A Round from Redis's (number, open, revealed) strings, None where the step was never touched."""
    number, open_, revealed = (list(state) + [None] * 3)[:3]
    return Round(step, int(number or 1), (open_ or "1") == "1", revealed == "1")


def _hashes(secret) -> list[str]:
    """What a Redis script checks of a session's secret: its key's hash and its holder token's hash."""
    key, holder = _parts(secret)
    return [_digest(key), _holder_digest(holder)]


class RedisStore(Store):
    """Rooms in Redis: one hash per room, its rounds and answers beside it, all expiring with it."""

    def __init__(self, url: str):
        import redis

        self.where = re.sub(r"//[^@/]*@", "//", url)  # never the password in a message
        self.client = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S,
                                           socket_connect_timeout=REDIS_TIMEOUT_S, decode_responses=True)
        self._lua = {name: self.client.register_script(s) for name, s in (
            ("answer", ANSWER_LUA), ("turn", TURN_LUA), ("close", CLOSE_LUA), ("move", MOVE_LUA),
            ("claim", CLAIM_LUA))}

    def _call(self, fn):
        import redis

        try:
            return fn()
        except redis.RedisError as e:
            raise RoomError(f"the room store at {self.where} cannot be reached ({type(e).__name__})",
                            "unreachable", where=self.where) from None

    def _script(self, name: str, code: str, keys: list, args: list, step: int = 0) -> list:
        """Script `name`'s answer, or the RoomError its refusal names (`_refusal`)."""
        got = self._call(lambda: self._lua[name](keys=keys, args=args))
        if got[0] in ("ok", "wrong"):
            return got
        raise _refusal(got[0], code, step)

    def _create(self, lesson: str, step: int, expires: float, digest: str, ttl_s: float) -> Room:
        fields = {"lesson": lesson, "step": step, "expires": expires, "secret": digest}
        for _ in range(20):
            code = _new_code(lambda c: False)
            if self._call(lambda c=code: self._put(c, fields, ttl_s)):
                return Room(code, lesson, step, expires)
        raise RoomError("no free room code", "unreachable", where=self.where)

    def _put(self, code: str, fields: dict, ttl_s: float) -> bool:
        """Claim `code` (a placeholder set only when absent), then fill it; False when the code was taken."""
        key = PREFIX + code
        if not self.client.set(key + ":claim", "1", nx=True, ex=int(ttl_s) + 1):
            return False
        pipe = self.client.pipeline()
        pipe.hset(key, mapping=fields)
        pipe.expire(key, int(ttl_s))
        pipe.execute()
        return True

    def _held(self, code: str) -> tuple[Room, str, str]:
        f = self._call(lambda: self.client.hgetall(PREFIX + code))
        if not f or float(f["expires"]) <= self.clock():
            raise _gone(code)
        return Room(code, f["lesson"], int(f["step"]), float(f["expires"])), f["secret"], f.get("holder", "")

    def _move(self, room: Room, secret: str, step: int) -> None:
        self._script("move", room.code, [PREFIX + room.code], [step, *_hashes(secret)])

    def _take_back(self, code: str, typed: str, holder: str) -> Room:
        room, key = self._held(code)[0], PREFIX + code
        got = self._script("claim", code, [key, key + ":fails"], [typed, holder, MAX_WRONG_KEYS])
        if got[0] == "wrong":
            raise _wrong_key(code, int(got[1]))
        return room

    def _close(self, code: str, secret: str) -> None:
        key = PREFIX + code
        self._script("close", code, [key + ":keys", key, key + ":claim", key + ":seen", key + ":fails"],
                     _hashes(secret))

    def _mark_seen(self, code: str, who: str, now: float) -> None:
        key = PREFIX + code + ":seen"
        pipe = self.client.pipeline()
        pipe.zadd(key, {who: now})
        pipe.zremrangebyscore(key, "-inf", now - PRESENT_S)
        pipe.expire(key, TTL_S)
        self._call(pipe.execute)

    def _count_following(self, code: str, now: float) -> int:
        return int(self._call(lambda: self.client.zcount(PREFIX + code + ":seen", now - PRESENT_S, "+inf")))

    def _keys(self, code: str, step: int) -> list[str]:
        """The scripts' KEYS for `step` of room `code`: the room, the step's round, the set of kept keys."""
        return [PREFIX + code, f"{PREFIX}{code}:round:{step}", f"{PREFIX}{code}:keys"]

    def _round(self, code: str, step: int) -> Round:
        room, round_key, _ = self._keys(code, step)
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(room)
        pipe.hmget(round_key, "number", "open", "revealed")
        exists, state = self._call(pipe.execute)
        if not exists:
            raise _gone(code)
        return _round_from(step, state)

    def _answer(self, code: str, who: str, step: int, value: str) -> None:
        self._script("answer", code, self._keys(code, step), [f"{PREFIX}{code}:answers:{step}:", who, value], step)

    def _answers_in(self, code: str, step: int, number: int | None) -> dict[str, str]:
        number = self._round(code, step).number if number is None else number
        return self._call(lambda: self.client.hgetall(f"{PREFIX}{code}:answers:{step}:{number}"))

    def _turn(self, code: str, secret: str, step: int, turn: str) -> Round:
        got = self._script("turn", code, self._keys(code, step), [turn, ROUNDS, *_hashes(secret)], step)
        return _round_from(step, got[1:])


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
