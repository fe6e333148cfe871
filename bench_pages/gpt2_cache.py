"""A model of GPT-2 small's shapes (random weights, made here) in a Hugging Face cache under the name `gpt2`, the way
a reader's machine gets GPT-2: `python -m lab prefetch gpt2` downloads it from a hub (here the stand-in hub of the
tests, tests/fake_hub.py, on loopback), and the app then loads it offline. For the class bench's own-text crowds
(issue 57): the hub never reaches these machines, and the real weights are not needed to measure the time.

    hf_home = prepared(Path("/tmp/gpt2-bench"))   # HF_HOME holding gpt2; made once, reused when present
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HUB_ID = "openai-community/gpt2"


def prepared(where: Path) -> Path:
    """HF_HOME under `where` with gpt2 (GPT-2 small's shapes, random weights) prefetched through the stand-in hub."""
    from lab.testing import random_models
    from tests.fake_hub import fake_hub, files_of

    hf_home, done = where / "hf", where / "hf" / ".prefetched"
    if done.exists():
        return hf_home
    model_dir = random_models.save("gpt2", where / "gpt2-small-random", size="small")
    with fake_hub({HUB_ID: files_of(model_dir)}) as hub:
        env = os.environ | {"HF_HOME": str(hf_home), "HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0",
                            "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
        out = subprocess.run([sys.executable, "-m", "lab", "prefetch", "gpt2"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"prefetch gpt2 failed: {(out.stdout + out.stderr).strip()[-400:]}")
    done.touch()
    return hf_home


if __name__ == "__main__":
    print(prepared(Path(sys.argv[1])))
