"""What the explorer's container checks before it serves: the models it ships, its port, its memory.

deploy/Dockerfile runs `python -m lab.container models` at build time (a missing or broken course model fails the
build, not a reader's first visit; so does a hub model baked in by the build's HUB_MODELS that does not load
offline from the image) and starts the app with `python -m lab.container serve`, which checks the
port and the container's memory limit, then becomes `streamlit run app.py` (exec: the server is the container's
process 1 and gets its SIGTERM). Each refusal is one readable line on stderr and a non-zero exit, so
`docker logs` / `podman logs` say why the container stopped instead of a reader seeing errors.

Exit codes: 2 a bad PORT, 3 too little memory, 4 a course model (or a baked hub model) missing or unreadable.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lab.models import hosting
from lab.models.registry import MODELS_DIR, REGISTRY

MIB = 1024 * 1024
# Resident memory of the app serving every page on the course models, measured in the container (docs/hosting.md,
# "The container"), plus a margin for a class's cached results; below it the server would be killed mid-class.
MIN_MEMORY_MIB = 1024
MEMORY_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
CONTAINERS_CONF = Path(__file__).resolve().parents[1] / "deploy" / "podman" / "containers.conf"


def podman_env() -> dict[str, str]:
    """The environment for podman: deploy/podman/containers.conf on a machine without systemd, as root (the
    project's CI and sandboxes), unless CONTAINERS_CONF is set; elsewhere podman keeps its own configuration."""
    out = dict(os.environ)
    if "CONTAINERS_CONF" not in out and os.getuid() == 0 and not Path("/run/systemd/system").is_dir():
        out["CONTAINERS_CONF"] = str(CONTAINERS_CONF)
    return out


def course_models() -> list[str]:
    """The registry's models shipped in the repository (models/<name>/), which the image must carry."""
    return [m.name for m in REGISTRY.values() if m.path is not None]


def model_problems(models_dir: Path = MODELS_DIR) -> list[str]:
    """One line per course model that is missing or unreadable under `models_dir`."""
    problems = []
    for name in course_models():
        folder = models_dir / name
        missing = [f for f in MODEL_FILES if not (folder / f).is_file()]
        if missing:
            problems.append(f"{folder}: missing {', '.join(missing)}")
            continue
        try:
            json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            problems.append(f"{folder}/config.json: not JSON ({e})")
    return problems


def hub_models() -> list[str]:
    """The hub models the image's build baked in (its HUB_MODELS, kept as LAB_HUB_MODELS), in order."""
    return list(dict.fromkeys(os.environ.get(hosting.BAKED_ENV, "").split()))


def hub_model_problems(names: list[str], load: bool = True) -> list[str]:
    """One line per baked hub model that is not a hub model, is not in the image's Hugging Face cache, or (`load`)
    does not load from it offline: lab.models.load from the cache only (local_files_only), as the pages load it;
    the image runs this with HF_HUB_OFFLINE=1."""
    from lab.models import hub

    problems = []
    for name in names:
        info = REGISTRY.get(name)
        if info is None or info.hub_id is None:
            problems.append(f"{name}: not a hub model of the registry ({', '.join(REGISTRY)})")
        elif not hub.is_available(name):
            problems.append(f"{name}: not in the image's Hugging Face cache ({hub.hub_cache_dir()})")
        elif load:
            problems += _load_problem(name)
    return problems


def _load_problem(name: str) -> list[str]:
    """[one line] when hub model `name` does not load offline, else []."""
    from lab.models import load
    from lab.models.hub import hub_cache_dir, one_line

    try:
        loaded = load(name)
    except Exception as e:  # whatever the library raises: the build's one line
        return [f"{name}: does not load offline from {hub_cache_dir()}: {one_line(e)}"]
    del loaded
    return []


def port_problem(value: str | None) -> str | None:
    """Why PORT cannot be served on, or None."""
    if value is None or not value.strip():
        return "PORT is not set: the image sets it (8501, or 7860 for a Space); pass -e PORT=<1-65535>"
    if not value.strip().isdigit() or not 1 <= int(value) <= 65535:
        return f"PORT={value!r} is not a port number (1-65535): the server cannot start, the health check fails"
    return None


def memory_limit(files=MEMORY_FILES) -> int | None:
    """The container's memory limit in bytes (cgroup v2 or v1), or None when there is none."""
    for name in files:
        try:
            raw = Path(name).read_text().strip()
        except OSError:
            continue
        if raw == "max" or not raw.isdigit():
            return None
        limit = int(raw)
        return None if limit >= 1 << 60 else limit  # cgroup v1 writes "no limit" as a huge number
    return None


def memory_need_mib(hub: list[str] = ()) -> int:
    """MiB the app needs: MIN_MEMORY_MIB for the course models plus each baked hub model's loaded size (the
    registry's estimate: fp32 weights and a working margin)."""
    return MIN_MEMORY_MIB + sum(REGISTRY[m].memory_bytes for m in hub if m in REGISTRY) // MIB


def memory_problem(limit: int | None, need_mib: int = MIN_MEMORY_MIB, hub: list[str] = ()) -> str | None:
    """Why a memory limit is too small for the course models (and the baked hub models `hub`), or None."""
    if limit is None or limit >= need_mib * MIB:
        return None
    models = "the course models" + "".join(f", {m}" for m in hub)
    return (f"the container may use {limit // MIB} MiB; the app on {models} needs at least {need_mib} MiB "
            f"(run it with --memory {need_mib}m or more)")


def serve_command(port: str) -> list[str]:
    """The server the container runs once its checks pass."""
    return ["streamlit", "run", "app.py", "--server.port", port, "--server.address", "0.0.0.0"]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    what = args[0] if args else ""
    if what == "models":
        problems = model_problems() + hub_model_problems(args[1:] or hub_models())
        for line in problems:
            print(f"lab.container: {line}", file=sys.stderr)
        if not problems:
            baked = args[1:] or hub_models()
            print(f"lab.container: course models present: {', '.join(course_models())}"
                  + (f"; hub models load offline: {', '.join(baked)}" if baked else ""))
        return 4 if problems else 0
    if what == "serve":
        port, hub = os.environ.get("PORT"), hub_models()
        for code, problem in ((2, port_problem(port)), (3, memory_problem(memory_limit(), memory_need_mib(hub), hub)),
                              (4, "; ".join(model_problems() + hub_model_problems(hub, load=False)) or None)):
            if problem:
                print(f"lab.container: {problem}", file=sys.stderr, flush=True)
                return code
        cmd = serve_command(port.strip())
        os.execvp(cmd[0], cmd)
        return 0  # (not reached: the server replaced this process)
    print("usage: python -m lab.container models [HUB_MODEL ...]|serve", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
