"""The hosted-memory benchmark's run (lab/benchmarks/hosting.py starts it in a fresh interpreter):
the app under AppTest, every page in turn, course-gpt2 pointed at a GPT-2-small-shaped model;
prints the peak and per-page resident memory as JSON.

    python bench_pages/hosted_memory.py MODEL_DIR PARAMS '["app_pages/home.py", ...]'
"""

import dataclasses
import json
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository: app.py, lab, ui, viz
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from lab.models import registry  # noqa: E402


def status(field: str) -> int:
    """A /proc/self/status memory field (VmRSS, VmHWM) in bytes; ru_maxrss where there is no /proc."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


def main(small: str, params: int, pages: list[str]) -> dict:
    """Open every page of the app with course-gpt2 standing for the model at `small`; the memory it took."""
    info = registry.info("course-gpt2")
    registry.REGISTRY["course-gpt2"] = dataclasses.replace(info, path=small, params=params,
                                                           memory_bytes=registry.memory_estimate(params),
                                                           context=1024)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.run()
    rss, problems = {}, []
    for page in pages:
        at.switch_page(page)
        at.run()
        problems += [f"{page}: {e.value}" for e in at.exception]
        rss[page] = status("VmRSS")
    from ui.model_loader import model_cache

    return {"peak": status("VmHWM"), "rss": rss, "problems": problems, "models": model_cache().keys()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]))))
