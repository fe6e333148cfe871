"""Virtual readers (lab/testing/readers.py) against the real app served as `make run` serves it: five readers of
one link, each run finished, each its own session, the link's query string read by the app."""

from bench_pages.readers import app_server, arrive


def test_five_readers_of_one_link_each_finish_their_run():
    with app_server() as url:
        readings = arrive(url, 5, 1.0, "tokens", "lang=pt", timeout=180)
    assert [r.status for r in readings] == ["FINISHED_SUCCESSFULLY"] * 5, readings
    assert all(r.finished and r.exceptions == 0 and r.deltas > 10 for r in readings), readings
    assert len({r.script_run_id for r in readings}) == 5  # five sessions, five runs
    # The query string reached the app: the page speaks Portuguese (lang=pt).
    assert all(any("Português" in x or "português" in x for x in r.texts) for r in readings), readings[0].texts
