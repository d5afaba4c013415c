"""Time ``harness view`` on a large episode: page render on the server and first paint in Chromium.

Usage: ``python benchmarks/view.py [--steps N] [--lines L] [--proxy-mb MB] [--no-browser]``.

Writes a throwaway run with one episode whose trajectory has N agent steps
(each a shell call printing L lines of numbers) and a proxy log of MB
megabytes, serves it on 127.0.0.1 and prints: the trajectory's size, the
server's time to render the episode page and one step chunk, the page's
size, and -- with Debian's ``/usr/bin/chromium`` and the ``playwright``
package -- the browser's first contentful paint and the time until the
first chunk of step bodies is in the page.  The target is a first paint
under 3 s with a 70 MB proxy log.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import threading
import time
from pathlib import Path

import click

from harness.store import RunStore, write_json
from harness.view.data import load_runs
from harness.view.server import start
from harness.view.site import Site

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def make_run(root: Path, steps: int, lines: int, proxy_mb: float) -> Path:
    store = RunStore.create(root / "big")
    paths = store.episode("big-episode").create()
    write_json(paths.row, {"run_id": store.run_id, "episode": "big-episode", "template": "bench", "task": "bench",
                           "profile": "p", "status": "ok"})
    trajectory = [{"step_id": 1, "source": "user", "message": "Find the change.",
                   "timestamp": "2026-01-01T00:00:00Z"}]
    for i in range(steps):
        output = "\n".join(f"row {k}: mean={k * 0.25:.3f} std={i * 1e-3:.2e} n={k * 17}" for k in range(lines))
        trajectory.append({"step_id": i + 2, "source": "agent", "message": f"Step {i}.",
                           "timestamp": f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
                           "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "Bash",
                                           "arguments": {"command": f"python3 step{i}.py"}}],
                           "observation": {"results": [{"source_call_id": f"c{i}", "content": output}]},
                           "metrics": {"prompt_tokens": 1000 + i, "completion_tokens": 20}})
    (paths.root / "trajectory.json").write_text(json.dumps({"schema_version": "ATIF-v1.6", "session_id": "b",
                                                            "agent": {"name": "a", "version": "1"},
                                                            "steps": trajectory}))
    line = json.dumps({"type": "request", "body": {"messages": [{"content": "x" * 900}]}}) + "\n"
    with open(paths.root / "proxy.jsonl", "w") as handle:
        handle.write(line * (int(proxy_mb * 1e6) // len(line) + 1))
    store.write_results()
    return store.root


@click.command()
@click.option("--steps", default=2000, show_default=True)
@click.option("--lines", default=20, show_default=True, help="Output lines per step.")
@click.option("--proxy-mb", default=70.0, show_default=True)
@click.option("--no-browser", is_flag=True)
def main(steps: int, lines: int, proxy_mb: float, no_browser: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = make_run(Path(tmp), steps, lines, proxy_mb)
        folder = run / "episodes" / "big-episode"
        print(f"trajectory {(folder / 'trajectory.json').stat().st_size / 1e6:.1f} MB, {steps + 1} steps; "
              f"proxy log {(folder / 'proxy.jsonl').stat().st_size / 1e6:.1f} MB")
        path = "runs/big/big-episode/index.html"
        site = Site(load_runs([run]))  # loads the plugins' view pages
        started = time.perf_counter()
        page = site.render(path)[0]
        print(f"server: episode page {len(page) / 1e6:.2f} MB rendered in {time.perf_counter() - started:.2f} s "
              f"(cold: trajectory parsed)")
        started = time.perf_counter()
        chunk = site.render("runs/big/big-episode/steps-0.js")[0]
        print(f"server: first step chunk {len(chunk) / 1e3:.0f} kB in {time.perf_counter() - started:.3f} s")
        if no_browser:
            return
        from playwright.sync_api import sync_playwright

        loop = asyncio.new_event_loop()
        box: dict = {}
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            box["runner"], box["port"] = loop.run_until_complete(start(Site(load_runs([run])), "127.0.0.1", 0))
            ready.set()
            loop.run_forever()

        threading.Thread(target=serve, daemon=True).start()
        ready.wait(20)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            tab = browser.new_page()
            tab.goto(f"http://127.0.0.1:{box['port']}/{path}", wait_until="load")
            paint = tab.evaluate("performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)[0]")
            tab.wait_for_function("document.documentElement.getAttribute('data-chunk-0') === 'loaded'")
            bodies = tab.evaluate("performance.getEntriesByName('harness-chunk-0')[0].startTime")
            browser.close()
        print(f"browser: first contentful paint {paint / 1000:.2f} s (target < 3 s); first step bodies in the page "
              f"at {bodies / 1000:.2f} s")
        asyncio.run_coroutine_threadsafe(box["runner"].cleanup(), loop).result(20)
        loop.call_soon_threadsafe(loop.stop)


if __name__ == "__main__":
    main()
