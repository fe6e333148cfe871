"""Screenshots for the docs, taken from the app as shipped (offline, the course models) in Debian's Chromium:

    python scripts/screenshots.py docs/teaching-en.png "/attention?lesson=03-attention-trophy&step=1" ...

Pairs of (file, link): each link opens in a fresh 1280 x 800 tab on one `streamlit run app.py` started on a free
loopback port, waits until the run ends and the charts are drawn, and saves the first screen as PNG.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.testing.browser import chromium, new_page, streamlit_server, wait_idle  # noqa: E402


def main(args: list[str]) -> int:
    if not args or len(args) % 2:
        print("usage: python scripts/screenshots.py FILE LINK [FILE LINK ...]", file=sys.stderr)
        return 2
    pairs = list(zip(args[::2], args[1::2], strict=True))
    with streamlit_server(str(ROOT / "app.py"), env={"HF_HUB_OFFLINE": "1"}) as url, chromium() as browser:
        for out, link in pairs:
            page = new_page(browser, 1280, 800)
            page.goto(url + link)
            wait_idle(page, 120_000)
            time.sleep(2)  # Vega draws after the run ends
            wait_idle(page, 120_000)
            page.screenshot(path=out)
            page.close()
            print(out, link)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
