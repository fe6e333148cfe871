"""The room store (lab/rooms.py) on both backends: this process's memory, and a real redis-server started here on
a free loopback port in a temporary folder (stopped at the end). One behaviour, checked twice."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from lab import rooms
from lab.testing.browser import free_port

REDIS = shutil.which("redis-server")


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """A real redis-server on 127.0.0.1 (no persistence, in a temp dir); its URL."""
    if REDIS is None:  # CI (.ci/run, REQUIRE_BROWSER=1) installs it and requires it
        missing = "redis-server is not installed (apt-get install -y redis-server)"
        pytest.fail(missing) if os.environ.get("REQUIRE_BROWSER") == "1" else pytest.skip(missing)
    port, folder = free_port(), tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    client = redis.Redis(port=port, socket_timeout=1)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.RedisError:
            time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(params=["memory", "redis"])
def store(request):
    if request.param == "memory":
        return rooms.MemoryStore()
    return rooms.RedisStore(request.getfixturevalue("redis_url"))


def test_a_room_starts_moves_and_is_read(store):
    room, secret = store.create("03-attention-trophy", 1)
    assert rooms.CODE.fullmatch(room.code) and room.step == 1 and room.lesson == "03-attention-trophy"
    assert room.expires > time.time() + rooms.TTL_S - 60
    assert store.get(room.code) == room
    assert store.get(room.code.lower()[:3] + " " + room.code.lower()[3:]).code == room.code  # typed by a student
    moved = store.move(room.code, secret, 3)
    assert moved.step == 3 and store.get(room.code).step == 3


def test_only_the_teachers_secret_moves_it(store):
    room, secret = store.create("07-sampling", 2)
    other, _ = store.create("07-sampling", 2)
    assert other.code != room.code
    for wrong in ["", "x", room.code, secret[:-1], secret + "x"]:
        with pytest.raises(rooms.RoomError) as e:
            store.move(room.code, wrong, 4)
        assert e.value.reason == "not_teacher"
    assert store.get(room.code).step == 2


@pytest.mark.parametrize("code", ["", "ABC", "ABCDEFG", "AB CD E0", "<script>", "ÅBCDEF", "A" * 500, "\x00" * 6])
def test_garbage_codes(store, code):
    with pytest.raises(rooms.RoomError) as e:
        store.get(code)
    assert e.value.reason == "not_a_code"


def test_unknown_and_expired_rooms(store):
    with pytest.raises(rooms.RoomError) as e:
        store.get("ABCDEF" if store.__class__ is rooms.RedisStore else "ZZZZZZ")
    assert e.value.reason == "no_room"
    room, secret = store.create("05-layer-by-layer", 1, ttl_s=1)
    time.sleep(1.6)
    with pytest.raises(rooms.RoomError) as e:
        store.get(room.code)
    assert e.value.reason == "no_room"
    with pytest.raises(rooms.RoomError):
        store.move(room.code, secret, 2)


def test_a_room_holds_nothing_but_its_lesson_step_and_expiry(redis_url):
    import redis

    store = rooms.RedisStore(redis_url)
    room, secret = store.create("12-detector", 2)
    fields = redis.Redis.from_url(redis_url, decode_responses=True).hgetall(rooms.PREFIX + room.code)
    assert set(fields) == {"lesson", "step", "expires", "secret"} and secret not in fields.values()


def test_two_processes_share_one_redis_room(redis_url):
    """A second client (another replica) sees the teacher's moves."""
    a, b = rooms.RedisStore(redis_url), rooms.RedisStore(redis_url)
    room, secret = a.create("04-heads-and-mask", 1)
    a.move(room.code, secret, 4)
    assert b.get(room.code).step == 4


def test_redis_unreachable_is_one_room_error():
    store = rooms.RedisStore(f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    started = time.monotonic()
    with pytest.raises(rooms.RoomError) as e:
        store.get("ABCDEF")
    assert e.value.reason == "unreachable" and "hunter2" not in str(e.value)
    assert time.monotonic() - started < 5


def test_the_store_follows_the_environment(monkeypatch, redis_url):
    monkeypatch.delenv(rooms.ENV, raising=False)
    assert isinstance(rooms.store(), rooms.MemoryStore)
    monkeypatch.setenv(rooms.ENV, redis_url)
    assert isinstance(rooms.store(), rooms.RedisStore)
    with pytest.raises(rooms.RoomError):
        rooms.store("http://example.org")


def test_students_following_are_counted_once_each(store):
    """The teacher's count (issue 48): one per browser session however often its page polls."""
    room, _ = store.create("03-attention-trophy", 1)
    assert store.following(room.code) == 0
    for who in ["a", "b", "a", "c", "a", "b"]:
        store.seen(room.code, who)
    assert store.following(room.code) == 3


def test_a_student_who_stopped_polling_is_no_longer_counted():
    now = [1000.0]
    store = rooms.MemoryStore(clock=lambda: now[0])
    room, _ = store.create("03-attention-trophy", 1)
    store.seen(room.code, "a")
    now[0] += rooms.PRESENT_S / 2
    store.seen(room.code, "b")
    assert store.following(room.code) == 2
    now[0] += rooms.PRESENT_S / 2 + 0.01  # a's last poll is now older than PRESENT_S
    assert store.following(room.code) == 1


def test_only_the_teachers_secret_takes_the_room_back_or_closes_it(store):
    room, secret = store.create("04-heads-and-mask", 2)
    store.move(room.code, secret, 4)
    assert store.claim(room.code, secret).step == 4  # a reloaded teacher finds the class's step
    for call in (store.claim, store.close):
        with pytest.raises(rooms.RoomError) as e:
            call(room.code, secret[:-1] + ("x" if secret[-1] != "x" else "y"))
        assert e.value.reason == "not_teacher"
    assert store.get(room.code).step == 4
    store.close(room.code, secret)
    with pytest.raises(rooms.RoomError) as e:
        store.get(room.code)
    assert e.value.reason == "no_room"


@pytest.mark.parametrize("step", [0, -1, rooms.MAX_STEP + 1, True, "3", 2.0, None])
def test_a_step_outside_1_to_max_is_refused_on_create_and_move(store, step):
    """Issue 51: a room created or moved to step 0, or one past the last allowed step, was accepted unnoticed; both
    stores check a step the same way, and the room stays where it was."""
    with pytest.raises(rooms.RoomError):
        store.create("03-attention-trophy", step)
    room, secret = store.create("03-attention-trophy", 2)
    with pytest.raises(rooms.RoomError):
        store.move(room.code, secret, step)
    assert store.get(room.code).step == 2
    assert store.move(room.code, secret, 1).step == 1
    assert store.move(room.code, secret, rooms.MAX_STEP).step == rooms.MAX_STEP


def _self_calls(cls) -> set[str]:
    """The `self._x(...)` methods a class's own code calls."""
    import ast
    import inspect
    import textwrap

    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    return {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "self" and n.func.attr.startswith("_")}


def test_both_stores_share_one_base_and_keep_only_their_storage():
    """Issue 58: the two stores repeated the same public methods (the checks, the ids, the wording) side by side.
    Now each public method is written once, in rooms.Store; a store writes only the storage the base asks for."""
    public = {name for name, v in vars(rooms.Store).items() if callable(v) and not name.startswith("_")}
    assert {"create", "get", "claim", "claim_by_key", "move", "close", "seen", "following", "round_of", "answer",
            "mine", "answers", "answered", "close_round", "reveal", "again"} <= public
    asked = _self_calls(rooms.Store) - set(vars(rooms.Store))
    for cls in (rooms.MemoryStore, rooms.RedisStore):
        assert issubclass(cls, rooms.Store)
        assert not public & set(vars(cls)), f"{cls.__name__} writes again {sorted(public & set(vars(cls)))}"
        assert asked <= set(vars(cls)), f"{cls.__name__} lacks {sorted(asked - set(vars(cls)))}"


def test_a_student_seen_under_a_typed_code_is_counted_on_both_stores(store):
    """One argument check for both: the memory store ignored a student seen under the code as typed (lower case, a
    space) while Redis counted them."""
    room, _ = store.create("03-attention-trophy", 1)
    store.seen(room.code.lower()[:3] + " " + room.code.lower()[3:], "student-a")
    assert store.following(room.code) == 1 and store.following(room.code.lower()) == 1


def test_each_refusal_has_one_wording_on_both_stores(store):
    """The same refusal reads the same on both stores: its message, reason and details (hand-written here)."""
    room, secret = store.create("03-attention-trophy", 2)
    store.again(room.code, secret, 2)
    store.close_round(room.code, secret, 2)
    expected = [
        (lambda: store.again(room.code, secret, 2), f"room {room.code}, step 2: no round after the second",
         "no_more_rounds", {"code": room.code, "step": 2}),
        (lambda: store.answer(room.code, "who", 2, "x"), f"room {room.code}, step 2: the round is closed",
         "closed", {"code": room.code, "step": 2}),
        (lambda: store.move(room.code, secret + "x", 1), f"not the teacher of room {room.code}", "not_teacher",
         {"code": room.code}),
        (lambda: store.claim_by_key(room.code, "AAAA-AAAA-AAAA"), f"not the teacher key of room {room.code}",
         "wrong_key", {"code": room.code, "wrong": 1}),
        (lambda: store.answers(room.code, 2, 3), "not a round: 3", "not_a_code", {"code": ""}),
    ]
    for call, message, reason, details in expected:
        with pytest.raises(rooms.RoomError) as e:
            call()
        assert (str(e.value), e.value.reason, e.value.details) == (message, reason, details)
    store.close(room.code, secret)
    with pytest.raises(rooms.RoomError) as e:
        store.round_of(room.code, 2)
    assert (str(e.value), e.value.reason) == (f"no room {room.code} (unknown or expired)", "no_room")
