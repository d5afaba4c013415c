"""Screenshots of the viewer for the documentation, made from a real run in headless Chromium.

Usage: ``python scripts/docs_screenshots.py [--run RUN_DIR] [--out docs/images]``

Without ``--run`` it first runs the README's first episode (the embedded default: one TraceBench BallDrop
episode by the ``euclidean-1nn`` baseline, offline) into a temporary folder.  It then serves the run with
``harness view`` on a free loopback port and writes ``view-leaderboard.png`` (the first page) and
``view-episode.png`` (the run's first episode page) with Debian's Chromium (``/usr/bin/chromium``, driven by
Playwright, never downloaded).  Exit 2 with a one-line error when the browser or Playwright is missing.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_run(out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "harness", "run", "--task", "tasks/tracebench/balldrop-low-direct.yaml",
                    "--out", str(out)], cwd=REPO, check=True)
    return out


def wait_for(url: str, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            if time.monotonic() > end:
                raise SystemExit(f"error: the viewer did not answer at {url} in {seconds:.0f} s")
            time.sleep(0.3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, help="run folder to show (default: run the first episode)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("error: needs Playwright (pip install -e '.[test]')", file=sys.stderr)
        return 2
    if not CHROMIUM.exists():
        print("error: needs Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run or first_run(Path(tmp) / "first-run")
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "harness", "view", str(run), "--port", str(port)], cwd=REPO)
        try:
            base = f"http://127.0.0.1:{port}/"
            wait_for(base)
            args.out.mkdir(parents=True, exist_ok=True)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
                page = browser.new_page(viewport={"width": 1200, "height": 760})
                page.goto(base, wait_until="networkidle")
                page.screenshot(path=str(args.out / "view-leaderboard.png"))
                links = page.eval_on_selector_all("a[href*='/episodes/'], a[href*='episode']",
                                                  "els => els.map(e => e.href)")
                if links:
                    page.goto(links[0], wait_until="networkidle")
                    page.screenshot(path=str(args.out / "view-episode.png"))
                browser.close()
        finally:
            server.terminate()
            server.wait(20)
    for name in ("view-leaderboard.png", "view-episode.png"):
        if (args.out / name).exists():
            print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
