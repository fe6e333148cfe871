"""The hosted image with gpt2 baked in, for the class bench through a container (LAB_CLASS_IMAGE,
lab/benchmarks/class_readers.py): a model of GPT-2 small's shapes (random weights, made here; the same folder
bench_pages/gpt2_cache.py makes) is served under gpt2's hub id by the stand-in hub (tests/fake_hub.py) on loopback,
and deploy/build-image.sh builds the image with HUB_MODELS=gpt2 and HF_ENDPOINT on that hub, as `make image
HUB_MODELS=gpt2 HF_ENDPOINT=...` would (tests/test_container_hub.py builds the same way). One build at a time
(/tmp/lab-image-build.lock, as the container tests take it), at nice 10. The hub stops when the build ends: the
image is offline at run time.

    python bench_pages/gpt2_image.py [TAG] [WHERE] [MODEL ...]   # default gpt2-explorer-gpt2:bench, gpt2
    # prints the build's last line: "image TAG (port 8501): built in N s, M MB, hub models: gpt2"

Other hub models of lab.testing.random_models.HUB_LIKE (the Space's four) are made and served the same way, each
under its own hub id: bench_pages/image_memory.py builds the image with all four.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


TAG = "gpt2-explorer-gpt2:bench"
WHERE = Path(tempfile.gettempdir()) / "lab-gpt2-bench"
LOCK = "/tmp/lab-image-build.lock"


def weights(where: Path) -> Path:
    """GPT-2 small's shapes, random weights, saved under `where` (made once, reused when present)."""
    from lab.testing import random_models

    model_dir = where / "gpt2-small-random"
    if not (model_dir / "model.safetensors").exists() or not (model_dir / "config.json").exists():
        random_models.save("gpt2", model_dir, size="small")
    return model_dir


def repos(where: Path, models: tuple[str, ...]) -> dict[str, dict[str, bytes]]:
    """{hub id: files} of random models of `models`' shapes (gpt2 in the folder weights() names)."""
    from lab.models.registry import REGISTRY
    from lab.testing import random_models
    from tests.fake_hub import files_of

    return {REGISTRY[m].hub_id: files_of(weights(where) if m == "gpt2" else
                                         random_models.save_hub_like(m, where / f"{m}-random")) for m in models}


def build(tag: str = TAG, where: Path = WHERE, models: tuple[str, ...] = ("gpt2",)) -> str:
    """Build `tag` with `models` fetched from the stand-in hub at build time; the build's last line."""
    from lab.testing import container
    from tests.fake_hub import fake_hub

    served = repos(where, models)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with fake_hub(served) as hub:
            env = container.env() | {"HUB_MODELS": " ".join(models), "HF_ENDPOINT": hub.url}
            out = subprocess.run(["nice", "-n", "10", str(container.BUILD), tag, "", str(ROOT)], capture_output=True,
                                 text=True, env=env, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"building {tag} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return out.stdout.strip().splitlines()[-1]


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else TAG, Path(sys.argv[2]) if len(sys.argv) > 2 else WHERE,
                tuple(sys.argv[3:]) or ("gpt2",)))
