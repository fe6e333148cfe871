"""The class bench through a container (LAB_CLASS_IMAGE, issue 59): the plan lab/benchmarks/class_readers.py hands
bench_pages/class_play.py, and the `podman run` that plan makes, without starting a container. A Space's free CPU
tier is 2 vCPU and 16 GB (Hugging Face's Spaces hardware table), so the container runs with --cpus=2 --memory=16g;
the gpt2 it serves is the one baked in the image, not a cache made on this machine."""

from __future__ import annotations

import json
import os
import subprocess

from bench_pages import class_play
from lab.benchmarks import class_readers
from lab.testing import container

IMAGE = "gpt2-explorer-gpt2:bench"


def _podman(baked: str):
    """A stand-in for `podman image inspect IMAGE --format ...Env...`: the image exists, its hub models `baked`."""
    def podman(*args, check=True, timeout=120):
        assert args[:3] == ("image", "inspect", IMAGE), args
        return subprocess.CompletedProcess(args, 0, f"PATH=/usr/bin\nLAB_HUB_MODELS={baked}\nPORT=8501\n", "")
    return podman


def _run_bench(monkeypatch, env: dict) -> tuple[dict, list[dict]]:
    """benchmarks() under `env`, class_play replaced by a recorder: (the plan it was given, the entries)."""
    for k in [k for k in os.environ if k.startswith("LAB_CLASS_") or k == "LAB_ENGINE_OFF"]:
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(container, "missing", lambda: None)
    monkeypatch.setattr(container, "podman", _podman("gpt2"))
    seen = {}

    def run(argv, **kw):
        seen["plan"] = plan = json.loads(argv[2])
        crowd = {"n": 1, "p95_s": 0.5, "finished": 1, "errors": 0}
        out = {f"{p}|{'own' if plan.get('own') else 'warm'}|1": crowd for p in plan["pages"]}
        out["memory|after|1"] = {"rss_mb": 900.0, "peak_mb": 1200.0}
        return subprocess.CompletedProcess(argv, 0, json.dumps(out) + "\n", "")

    monkeypatch.setattr(class_readers.subprocess, "run", run)
    entries = class_readers.benchmarks()
    return seen["plan"], entries


def test_own_texts_on_gpt2_are_planned_through_a_free_tier_container_of_the_image(monkeypatch):
    plan, entries = _run_bench(monkeypatch, {"LAB_CLASS_IMAGE": IMAGE, "LAB_CLASS_OWN": "1",
                                             "LAB_CLASS_MODEL": "gpt2", "LAB_CLASS_SIZES": "1,5"})
    assert plan["image"] == IMAGE and plan["cpus"] == 2 and plan["memory"] == "16g"
    assert plan["own"] is True and plan["model"] == "gpt2" and plan["sizes"] == [1, 5]
    assert plan["pages"] == ["attention", "logit_lens", "sampling"]
    assert "gpt2_cache" not in plan  # the image's own gpt2, not one made on this machine
    assert [e["image"] for e in entries] == [IMAGE] * 3
    assert all(f"a container of {IMAGE}, 2 CPUs, 16 GB, gpt2" in e["name"] for e in entries), entries[0]["name"]
    assert entries[0]["rss_mb_after"] == {"1": 900.0} and entries[0]["rss_peak_mb_after"] == {"1": 1200.0}


def test_a_shared_link_on_gpt2_names_the_model_in_the_link(monkeypatch):
    plan, entries = _run_bench(monkeypatch, {"LAB_CLASS_IMAGE": IMAGE, "LAB_CLASS_MODEL": "gpt2",
                                             "LAB_CLASS_PAGES": "attention", "LAB_CLASS_SIZES": "1"})
    assert plan["image"] == IMAGE and plan["model"] == "gpt2" and "own" not in plan and "gpt2_cache" not in plan
    assert [e["temperature"] for e in entries] == ["warm"]


def test_without_the_image_the_bench_serves_a_local_process_as_before(monkeypatch):
    plan, entries = _run_bench(monkeypatch, {"LAB_CLASS_OWN": "1", "LAB_CLASS_MODEL": "gpt2",
                                             "LAB_CLASS_SIZES": "1", "LAB_CLASS_GPT2_CACHE": "/nowhere"})
    assert "image" not in plan and "cpus" not in plan and plan["gpt2_cache"] == "/nowhere"
    assert "one process, gpt2" in entries[0]["name"] and "image" not in entries[0]


def test_the_container_runs_on_two_cpus_and_16_gb_with_the_crowds_switches(monkeypatch):
    """class_play.server's container: the podman command its options make, and no local gpt2 cache prepared."""
    asked = {}
    monkeypatch.setattr(class_play.container, "container", lambda image, **kw: asked.update(kw, image=image))
    monkeypatch.setattr(class_play.gpt2_cache, "prepared", lambda where: (_ for _ in ()).throw(AssertionError(where)))
    plan = {"image": IMAGE, "cpus": 2, "memory": "16g", "flags": [], "model": "gpt2", "own": True,
            "env": {"LAB_WARM": "0", "LAB_ENGINE_OFF": "1"}}
    class_play.server(plan)
    image = asked.pop("image")
    cmd = container.run_command(image, 8600, "lab-x", **asked)
    assert cmd[-1] == IMAGE and "--cpus=2" in cmd and "--memory=16g" in cmd
    pairs = {cmd[i + 1] for i, arg in enumerate(cmd) if arg == "-e"}
    assert pairs == {"LAB_WARM=0", "LAB_ENGINE_OFF=1"}, cmd


def test_an_image_without_the_crowds_model_is_refused_with_its_hub_models(monkeypatch):
    monkeypatch.setattr(container, "missing", lambda: None)
    monkeypatch.setattr(container, "podman", _podman(""))
    assert class_readers.image_problem(IMAGE, "gpt2") == f"the image {IMAGE} carries no gpt2 (its hub models: none)"
    assert class_readers.image_problem(IMAGE, None) is None  # the course models are always in the image
    assert class_readers.image_problem(IMAGE, "course-gpt2") is None
    assert "LAB_CLASS_REPLICAS" in class_readers.image_problem(IMAGE, None, replicas=2)
