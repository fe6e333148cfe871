"""Answers in a room (issue 52, the store's side): rounds per step, anonymous answers counted once per browser
session, the teacher's close / reveal / vote again, and the teacher's typed key back into the room. Every
behaviour on both stores: this process's memory and a real redis-server (the fixture of tests/test_rooms.py)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab import rooms
from lab.testing.browser import free_port
from tests.test_rooms import redis_url  # noqa: F401  (the fixture: a real redis-server for this module)

STEP = 3


@pytest.fixture(params=["memory", "redis"])
def store(request):
    if request.param == "memory":
        return rooms.MemoryStore()
    return rooms.RedisStore(request.getfixturevalue("redis_url"))


def _refused(reason: str, call, *args):
    with pytest.raises(rooms.RoomError) as e:
        call(*args)
    assert e.value.reason == reason, (e.value.reason, str(e.value))
    return e.value


def test_a_step_nobody_touched_is_open_on_round_1(store):
    room, _ = store.create("07-sampling", 1)
    assert store.round_of(room.code, STEP) == rooms.Round(STEP, 1, open=True, revealed=False)
    assert store.answers(room.code, STEP) == {} and store.answered(room.code, STEP) == 0
    assert store.mine(room.code, "a", STEP) is None
    assert store.answers(room.code, STEP, 2) == {}


def test_answers_are_counted_once_per_student_and_a_change_replaces(store):
    room, _ = store.create("07-sampling", STEP)
    for who, value in [("a", "cat"), ("b", "dog"), ("c", "cat"), ("a", "dog"), ("b", "dog"), ("d", " the")]:
        store.answer(room.code, who, STEP, value)
    assert store.answers(room.code, STEP) == {"dog": 2, "cat": 1, " the": 1}
    assert store.answered(room.code, STEP) == 4
    assert store.mine(room.code, "a", STEP) == "dog" and store.mine(room.code, "d", STEP) == " the"
    for _ in range(1000):  # one browser hammering the button: still one answer
        store.answer(room.code, "e", STEP, "fish")
    assert store.answers(room.code, STEP)["fish"] == 1 and store.answered(room.code, STEP) == 5
    assert store.answers(room.code.lower(), STEP) == store.answers(room.code, STEP)  # the code as typed
    assert store.answers(room.code, STEP + 1) == {}  # each step has its own answers


def test_a_closed_or_revealed_round_refuses_answers_and_keeps_the_given_ones(store):
    room, secret = store.create("07-sampling", STEP)
    store.answer(room.code, "a", STEP, "cat")
    assert store.close_round(room.code, secret, STEP) == rooms.Round(STEP, 1, open=False, revealed=False)
    assert store.round_of(room.code, STEP) == rooms.Round(STEP, 1, open=False, revealed=False)
    e = _refused("closed", store.answer, room.code, "a", STEP, "dog")
    assert e.details == {"code": room.code, "step": STEP}
    _refused("closed", store.answer, room.code, "b", STEP, "dog")
    assert store.answers(room.code, STEP) == {"cat": 1} and store.mine(room.code, "a", STEP) == "cat"
    assert store.reveal(room.code, secret, STEP) == rooms.Round(STEP, 1, open=False, revealed=True)
    _refused("closed", store.answer, room.code, "c", STEP, "dog")
    assert store.close_round(room.code, secret, STEP).revealed  # closing a revealed round leaves it revealed
    store.answer(room.code, "a", STEP + 1, "open")  # another step is still open
    other = store.create("07-sampling", STEP)[0]
    store.answer(other.code, "a", STEP, "open")  # and another room
    assert store.answers(room.code, STEP) == {"cat": 1}


def test_reveal_on_an_open_round_closes_it(store):
    room, secret = store.create("07-sampling", STEP)
    store.answer(room.code, "a", STEP, "cat")
    assert store.reveal(room.code, secret, STEP) == rooms.Round(STEP, 1, open=False, revealed=True)
    _refused("closed", store.answer, room.code, "a", STEP, "dog")


def test_vote_again_opens_round_2_and_keeps_round_1(store):
    room, secret = store.create("07-sampling", STEP)
    for who, value in [("a", "cat"), ("b", "dog"), ("c", "cat")]:
        store.answer(room.code, who, STEP, value)
    store.reveal(room.code, secret, STEP)
    assert store.again(room.code, secret, STEP) == rooms.Round(STEP, 2, open=True, revealed=False)
    assert store.answers(room.code, STEP) == {} and store.answered(room.code, STEP) == 0
    assert store.mine(room.code, "a", STEP) is None  # the current round is round 2
    store.answer(room.code, "a", STEP, "dog")
    store.answer(room.code, "d", STEP, "dog")
    assert store.answers(room.code, STEP) == store.answers(room.code, STEP, 2) == {"dog": 2}
    assert store.answers(room.code, STEP, 1) == {"cat": 2, "dog": 1}
    assert store.mine(room.code, "a", STEP) == "dog" and store.answered(room.code, STEP) == 2
    _refused("no_more_rounds", store.again, room.code, secret, STEP)
    assert store.round_of(room.code, STEP) == rooms.Round(STEP, 2, open=True, revealed=False)
    assert store.close_round(room.code, secret, STEP) == rooms.Round(STEP, 2, open=False, revealed=False)
    _refused("no_more_rounds", store.again, room.code, secret, STEP)
    assert store.reveal(room.code, secret, STEP) == rooms.Round(STEP, 2, open=False, revealed=True)
    assert store.answers(room.code, STEP, 1) == {"cat": 2, "dog": 1}  # round 1 still whole


def test_only_the_teachers_secret_closes_reveals_or_votes_again(store):
    room, secret = store.create("07-sampling", STEP)
    other, other_secret = store.create("07-sampling", STEP)
    store.answer(room.code, "a", STEP, "cat")
    for call in (store.close_round, store.reveal, store.again):
        for wrong in ["", room.code, other_secret, secret[:-1], secret.lower() if secret.lower() != secret else "x",
                      rooms.teacher_key(secret), None]:
            _refused("not_teacher", call, room.code, wrong, STEP)
    assert store.round_of(room.code, STEP) == rooms.Round(STEP, 1, open=True, revealed=False)
    store.answer(room.code, "a", STEP, "dog")
    assert store.answers(room.code, STEP) == {"dog": 1}


@pytest.mark.parametrize("value", ["", "x" * 101, None, 3, b"cat", ["cat"]])
def test_what_is_not_an_answer_is_refused(store, value):
    room, _ = store.create("07-sampling", STEP)
    e = _refused("not_an_answer", store.answer, room.code, "a", STEP, value)
    assert e.details == {"most": rooms.MAX_ANSWER}
    assert store.answered(room.code, STEP) == 0


def test_answers_and_ids_at_their_longest_are_kept_and_one_past_is_refused(store):
    room, _ = store.create("07-sampling", STEP)
    store.answer(room.code, "w" * rooms.MAX_WHO, STEP, "x" * rooms.MAX_ANSWER)
    store.answer(room.code, "v", STEP, "<script>alert(1)</script> \x00 é")  # the store keeps text as given
    assert store.answers(room.code, STEP) == {"x" * rooms.MAX_ANSWER: 1, "<script>alert(1)</script> \x00 é": 1}
    for who in ["", "w" * (rooms.MAX_WHO + 1), None, 7]:
        _refused("not_an_answer", store.answer, room.code, who, STEP, "cat")
    assert store.answered(room.code, STEP) == 2


@pytest.mark.parametrize("step", [0, -1, rooms.MAX_STEP + 1, True, "3", 2.0, None])
def test_a_step_outside_1_to_max_is_refused_everywhere(store, step):
    room, secret = store.create("07-sampling", STEP)
    for call, args in [(store.round_of, ()), (store.answer, ("a", "cat")), (store.mine, ("a",)),
                       (store.answers, ()), (store.answered, ())]:
        args = args[:1] + (step,) + args[1:] if call in (store.answer, store.mine) else (step,)
        _refused("not_a_code", call, room.code, *args)
    for call in (store.close_round, store.reveal, store.again):
        _refused("not_a_code", call, room.code, secret, step)


@pytest.mark.parametrize("number", [0, 3, -1, True, "1", 1.0])
def test_a_round_that_cannot_be_is_refused(store, number):
    room, _ = store.create("07-sampling", STEP)
    _refused("not_a_code", store.answers, room.code, STEP, number)


def test_unknown_and_garbage_codes(store):
    for code, reason in [("ZZZZZZ", "no_room"), ("ABC", "not_a_code"), ("<script>", "not_a_code")]:
        for call, args in [(store.round_of, (STEP,)), (store.answer, ("a", STEP, "cat")),
                           (store.mine, ("a", STEP)), (store.answers, (STEP,)), (store.answered, (STEP,)),
                           (store.close_round, ("x", STEP)), (store.reveal, ("x", STEP)),
                           (store.again, ("x", STEP)), (store.claim_by_key, ("ABCD-EFGH-JKLM",))]:
            _refused(reason, call, code, *args)


def test_an_expired_room_takes_its_answers_with_it(store):
    room, secret = store.create("07-sampling", STEP, ttl_s=1)
    store.answer(room.code, "a", STEP, "cat")
    store.close_round(room.code, secret, STEP)
    time.sleep(1.3)
    for call, args in [(store.round_of, (STEP,)), (store.answer, ("b", STEP, "cat")), (store.mine, ("a", STEP)),
                       (store.answers, (STEP,)), (store.answered, (STEP,)), (store.reveal, (secret, STEP)),
                       (store.claim_by_key, (rooms.teacher_key(secret),))]:
        _refused("no_room", call, room.code, *args)


def test_memory_forgets_an_expired_rooms_answers():
    now = [1000.0]
    store = rooms.MemoryStore(clock=lambda: now[0])
    room, secret = store.create("07-sampling", STEP, ttl_s=60)
    store.answer(room.code, "a", STEP, "cat")
    store.reveal(room.code, secret, STEP)
    _refused("wrong_key", store.claim_by_key, room.code, "AAAA-AAAA-AAAA")
    now[0] += 61
    _refused("no_room", store.answers, room.code, STEP)
    store.create("07-sampling", 1)  # a new room sweeps the expired ones
    assert room.code not in store._answers and room.code not in store._rounds and room.code not in store._wrong


def test_closing_the_room_removes_its_answers(store):
    room, secret = store.create("07-sampling", STEP)
    store.answer(room.code, "a", STEP, "cat")
    store.again(room.code, secret, STEP)
    store.answer(room.code, "a", STEP, "dog")
    store.close(room.code, secret)
    for call, args in [(store.answers, (STEP,)), (store.answer, ("a", STEP, "cat")), (store.round_of, (STEP,))]:
        _refused("no_room", call, room.code, *args)
    if isinstance(store, rooms.MemoryStore):
        assert all(room.code not in kept for kept in (store._answers, store._rounds, store._wrong, store._seen))


def test_closing_a_redis_room_leaves_no_key_and_every_key_expires_with_it(redis_url):  # noqa: F811
    import redis

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    store = rooms.RedisStore(redis_url)
    room, secret = store.create("07-sampling", STEP, ttl_s=600)
    store.seen(room.code, "a")
    _refused("wrong_key", store.claim_by_key, room.code, "AAAA-AAAA-AAAA")
    for step in (STEP, STEP + 1):
        store.answer(room.code, "a", step, "cat")
        store.reveal(room.code, secret, step)
        store.again(room.code, secret, step)
        store.answer(room.code, "b", step, "dog")
    keys = client.keys(rooms.PREFIX + "*")
    assert len(keys) == 1 + 1 + 1 + 1 + 1 + 2 * (1 + 2)  # room, claim, seen, fails, keys; per step a round, 2 answers
    longest = {k: rooms.TTL_S if k.endswith(":seen") else 601 for k in keys}  # :seen: refreshed by the polls
    assert all(0 < client.ttl(k) <= longest[k] for k in keys), {k: client.ttl(k) for k in keys}
    values = [v for k in keys if client.type(k) == "hash" for v in client.hvals(k)]
    assert secret not in values and rooms.teacher_key(secret) not in values
    store.close(room.code, secret)
    assert client.keys(rooms.PREFIX + "*") == []


def test_many_students_answering_at_once_are_each_counted_once(store):
    """60 students, each changing their answer 5 times, all at once (and on Redis half of them through a second
    client, as a second app process would): the counts are exact."""
    room, _ = store.create("07-sampling", STEP)
    second = rooms.RedisStore(_url(store)) if isinstance(store, rooms.RedisStore) else store
    start, errors = threading.Barrier(60), []

    def student(i: int):
        mine = second if i % 2 else store
        start.wait()
        try:
            for k in range(5):
                mine.answer(room.code, f"student-{i}", STEP, f"answer-{(i + k) % 7}")
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(60)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    expected = Counter(f"answer-{(i + 4) % 7}" for i in range(60))
    assert store.answers(room.code, STEP) == second.answers(room.code, STEP) == dict(expected)
    assert store.answered(room.code, STEP) == 60 and sum(expected.values()) == 60


def _url(store: rooms.RedisStore) -> str:
    kw = store.client.connection_pool.connection_kwargs
    return f"redis://{kw['host']}:{kw['port']}/{kw.get('db', 0)}"


def test_answers_racing_the_teachers_close_are_either_counted_or_refused(store):
    """40 students keep changing their answer while the teacher closes the round: once close_round has returned the
    counts never move again, each student's kept answer is the last one acknowledged to them, and every refusal
    says "closed"."""
    room, secret = store.create("07-sampling", STEP)
    start, last, refusals = threading.Barrier(41), {}, []

    def student(i: int):
        start.wait()
        for k in range(10_000):
            try:
                store.answer(room.code, f"s{i}", STEP, f"v{k % 5}")
            except rooms.RoomError as e:
                refusals.append(e.reason)
                return
            last[f"s{i}"] = f"v{k % 5}"

    threads = [threading.Thread(target=student, args=(i,)) for i in range(40)]
    [t.start() for t in threads]
    start.wait()
    time.sleep(0.2)
    store.close_round(room.code, secret, STEP)
    at_close = store.answers(room.code, STEP)
    [t.join() for t in threads]
    assert refusals == ["closed"] * 40
    assert store.answers(room.code, STEP) == at_close == dict(Counter(last.values()))
    assert all(store.mine(room.code, f"s{i}", STEP) == last.get(f"s{i}") for i in range(40))


OPS = st.lists(st.one_of(
    st.tuples(st.just("answer"), st.sampled_from("abcde"), st.sampled_from(["cat", "dog", " the", "Cat"])),
    st.tuples(st.sampled_from(["close", "reveal", "again"]))), max_size=30)


def _model(ops) -> tuple[list[dict[str, str]], rooms.Round]:
    """What the store should hold after `ops`: each round's {who: answer} and the current round."""
    kept, now = [{}], rooms.Round(STEP, 1, True, False)
    for op in ops:
        if op[0] == "answer" and now.open:
            kept[-1][op[1]] = op[2]
        elif op[0] == "again" and now.number < 2:
            kept.append({})
            now = rooms.Round(STEP, 2, True, False)
        elif op[0] in ("close", "reveal"):
            now = rooms.Round(STEP, now.number, False, now.revealed or op[0] == "reveal")
    return kept, now


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_the_counts_are_the_last_answer_of_each_student_whatever_happens(store, ops):
    """Property: counts sum to the number of distinct students of the round; a resubmission replaces, never adds;
    closing, revealing and voting again behave as the model above."""
    room, secret = store.create("07-sampling", STEP)
    turns = {"close": store.close_round, "reveal": store.reveal, "again": store.again}
    for op in ops:
        try:
            store.answer(room.code, op[1], STEP, op[2]) if op[0] == "answer" else turns[op[0]](room.code, secret, STEP)
        except rooms.RoomError as e:
            assert e.reason in ("closed", "no_more_rounds")
    kept, now = _model(ops)
    assert store.round_of(room.code, STEP) == now
    for number, answers in enumerate(kept, start=1):
        assert store.answers(room.code, STEP, number) == dict(Counter(answers.values()))
        assert sum(store.answers(room.code, STEP, number).values()) == len(answers)
    assert store.answered(room.code, STEP) == len(kept[-1])
    assert all(store.mine(room.code, who, STEP) == kept[-1].get(who) for who in "abcde")


def test_the_teacher_takes_the_room_back_by_typing_the_key(store):
    room, secret = store.create("04-heads-and-mask", 2)
    key = rooms.teacher_key(secret)
    assert len(key) == 14 and key.count("-") == 2 and key.replace("-", "") == secret
    assert rooms.KEY.fullmatch(secret) and secret != room.code
    store.answer(room.code, "a", 2, "cat")
    store.move(room.code, secret, 4)
    held = secret
    for typed in [key, key.lower(), " " + key.replace("-", " ").lower() + "\n", secret]:
        back, kept = store.claim_by_key(room.code, typed)
        assert back == store.get(room.code) and back.step == 4
        assert rooms.teacher_key(kept) == key and kept != held  # the same key, a new session (issue 56)
        _refused("taken_back", store.move, room.code, held, 3)  # the session it replaced no longer moves the room
        held = kept
    assert store.move(room.code, kept, 2).step == 2  # the session keeps its secret, as after create
    assert store.answers(room.code, 2) == {"cat": 1}  # the answers already given are kept


def test_a_students_link_or_a_wrong_key_gives_no_control(store):
    room, secret = store.create("04-heads-and-mask", 2)
    other, other_secret = store.create("04-heads-and-mask", 2)
    flipped = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    for wrong in ["", room.code, room.code * 2, f"?room={room.code}", other_secret, rooms.teacher_key(other_secret),
                  flipped, secret[:-1], secret + "A", "é" * 12, None, 12, "A" * 1000]:
        _refused("wrong_key", store.claim_by_key, room.code, wrong)
    assert store.claim_by_key(other.code, other_secret)[0] == other
    for bad in ["", "x", None, "A" * 11, room.code]:
        _refused("not_teacher", rooms.teacher_key, bad)


def test_the_store_keeps_no_secret_and_no_key_in_clear():
    store = rooms.MemoryStore()
    room, secret = store.create("04-heads-and-mask", 2)
    _, kept = store.claim_by_key(room.code, rooms.teacher_key(secret))
    held = repr((store._rooms, store._wrong, store._rounds, store._answers, store._holders))
    assert secret not in held and rooms.teacher_key(secret) not in held
    assert kept.split(".")[1] not in held  # the new session's holder token: its hash only (issue 56)


def test_twenty_wrong_keys_lock_the_typed_way_back_but_not_the_teachers_session(store):
    room, secret = store.create("04-heads-and-mask", 2)
    other, other_secret = store.create("04-heads-and-mask", 2)
    wrong = "AAAA-AAAA-AAAA" if secret != "A" * 12 else "BBBB-BBBB-BBBB"
    for n in range(1, rooms.MAX_WRONG_KEYS):
        assert _refused("wrong_key", store.claim_by_key, room.code, wrong).details["wrong"] == n
    for _ in range(2):
        held = store.claim_by_key(room.code, secret)[1]  # a right key does not use up a try
        assert rooms.teacher_key(held) == rooms.teacher_key(secret)
    _refused("wrong_key", store.claim_by_key, room.code, "garbage")  # the 20th wrong one
    for typed in (secret, rooms.teacher_key(secret), secret):
        _refused("too_many_keys", store.claim_by_key, room.code, typed)  # from now on, even the right key
    assert store.claim(room.code, held) == store.get(room.code)  # the teacher's open session keeps the room
    assert store.move(room.code, held, 3).step == 3
    assert store.claim_by_key(other.code, rooms.teacher_key(other_secret))[0] == other  # other rooms untouched


def test_many_wrong_keys_at_once_check_no_more_than_twenty(store):
    """40 wrong keys typed at once, then the right one: refused (the limit holds under a race)."""
    room, secret = store.create("04-heads-and-mask", 2)
    start = threading.Barrier(40)

    def guess():
        start.wait()
        with pytest.raises(rooms.RoomError):
            store.claim_by_key(room.code, "AAAA-AAAA-AAAB")

    threads = [threading.Thread(target=guess) for _ in range(40)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    _refused("too_many_keys", store.claim_by_key, room.code, secret)


def test_redis_unreachable_is_one_room_error_for_answers_too():
    store = rooms.RedisStore(f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    started = time.monotonic()
    for call, args in [(store.round_of, (STEP,)), (store.answer, ("a", STEP, "cat")), (store.mine, ("a", STEP)),
                       (store.answers, (STEP,)), (store.answered, (STEP,)), (store.close_round, ("x", STEP)),
                       (store.claim_by_key, ("AAAA-AAAA-AAAA",))]:
        e = _refused("unreachable", call, "ABCDEF", *args)
        assert "hunter2" not in str(e)
    assert time.monotonic() - started < 15
