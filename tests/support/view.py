"""Shared by the viewer tests: a server on a background thread, headless Chromium, a hand-made trajectory."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path
from tests.support.paths import TESTS

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = TESTS / "artifacts" / "view"


def chromium_missing() -> str | None:
    """Why the browser tests cannot run, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "needs the playwright package (test extra)"
    if not CHROMIUM.exists() or shutil.which("chromium") is None:
        return "needs Debian's chromium (apt-get install chromium chromium-driver)"
    return None


@contextmanager
def served(site, host: str = "127.0.0.1"):
    """Serve ``site`` from a background thread; yields (base URL, port)."""
    from harness.view.server import start

    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict = {}

    def run() -> None:
        asyncio.set_event_loop(loop)
        box["runner"], box["port"] = loop.run_until_complete(start(site, host, 0))
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(20), "viewer did not start"
    try:
        yield f"http://{host}:{box['port']}/", box["port"]
    finally:
        asyncio.run_coroutine_threadsafe(box["runner"].cleanup(), loop).result(20)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(20)


@contextmanager
def browser():
    """A headless Debian Chromium page (1280 × 900)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chrome.new_page(viewport={"width": 1280, "height": 900})
        finally:
            chrome.close()


def shot(page, name: str) -> Path:
    """Save a full-page screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def trajectory(n_agent_steps: int, output_lines: int = 3, plot: str | None = None) -> dict:
    """An ATIF trajectory: a user prompt, then agent steps each with one Bash call printing numbers;
    step 2 writes ``plot`` (when given) and step 3 reads it; the last call fails."""
    steps = [{"step_id": 1, "timestamp": "2026-01-01T00:00:00Z", "source": "user", "message": "Find the change."}]
    for i in range(n_agent_steps):
        command = f"python3 -c 'print({i} * 1.5)'"
        if plot and i == 0:
            command = f"python3 plot.py  # writes {plot}"
        call = {"tool_call_id": f"c{i}", "function_name": "Bash", "arguments": {"command": command}}
        output = "\n".join(f"value {i}.{k} mean={k * 0.25:.2f} std=1e-3" for k in range(output_lines))
        result = {"source_call_id": f"c{i}", "content": output, "extra": {"is_error": i == n_agent_steps - 1}}
        if plot and i == 1:
            call = {"tool_call_id": f"c{i}", "function_name": "Read", "arguments": {"file_path": f"/workspace/{plot}"}}
            result = {"source_call_id": f"c{i}", "content": "[image]", "extra": {"is_error": False}}
        seconds = 2 * (i + 1)
        steps.append({"step_id": i + 2, "timestamp": f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z",
                      "source": "agent", "model_name": "m", "message": f"Step {i}: I will compute {i} * 1.5.",
                      "tool_calls": [call], "observation": {"results": [result]},
                      "metrics": {"prompt_tokens": 1000 + i, "completion_tokens": 10 + i, "cost_usd": 0.001}})
    return {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": steps}


def write_proxy_log(path: Path, megabytes: float) -> int:
    """A proxy log of about ``megabytes`` MB (request/response records); returns its size in bytes."""
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 900}]}
    line = json.dumps({"type": "request", "seq": 0, "method": "POST", "path": "/v1/messages", "body": body}) + "\n"
    target = int(megabytes * 1_000_000)
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(target // len(line) + 1):
            handle.write(line)
    return path.stat().st_size
