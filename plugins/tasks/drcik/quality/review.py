"""The review page of Dr-CiK Appendix D.2: a person marks each calibration unit acceptable or not, with a note.

``harness dr-review GEN_DIR`` serves, on the loopback interface only, one page listing the units of the four
calibrated stages (:data:`calibration.STAGES`): each unit's judged inputs (the values of its last judged attempt)
and its output, the records already given, and a form (reviewer, verdict, note, optional entry).  A submitted
form is appended to ``GEN_DIR/generation/calibration/reviews.jsonl`` (:func:`calibration.append_review`); nothing
is ever rewritten or deleted.

Writes are guarded: a write is a ``POST /review`` whose ``Origin`` header is the server's own origin (a missing
or foreign Origin is refused, 403) and whose ``X-Review-Token`` is the per-launch token embedded in the page
(a random 32-byte value made when the server starts); the ``Host`` header must name the server.  The page is
this command's own: ``harness view --bundle`` (static export of runs) never includes it nor the reviews file.
"""

from __future__ import annotations

import html
import json
import secrets
from pathlib import Path
from typing import Any

from aiohttp import web

from tsagent_plugins.tasks.drcik.quality import calibration as cal

LOOPBACK = "127.0.0.1"
TOKEN_HEADER = "X-Review-Token"


def units(gen_dir: Path) -> list[dict[str, Any]]:
    """``[{stage, unit, task, inputs, output}]`` of every judged unit of the calibrated stages."""
    out = []
    for stage, (folder, prompt) in cal.STAGES.items():
        root = Path(gen_dir) / "generation" / folder
        if not root.is_dir():
            continue
        for unit in sorted(p for p in root.iterdir() if p.is_dir()):
            values = cal.last_judge_values(gen_dir, stage, unit.name)
            if values is None:
                continue
            result = unit / "result.json"
            output = json.loads(result.read_text(encoding="utf-8")).get("output") if result.is_file() else None
            out.append({"stage": stage, "unit": unit.name, "task": unit.name.split("__")[0], "inputs": values,
                        "output": output})
    return out


def page(gen_dir: Path, token: str) -> str:
    records = cal.read_reviews(Path(gen_dir) / cal.REVIEWS)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Review {html.escape(Path(gen_dir).name)}"
             f"</title><meta name='review-token' content='{token}'></head><body><h1>Calibration review</h1>"]
    for u in units(gen_dir):
        uid = f"{u['stage']}--{u['unit']}"
        given = [r for r in records if r.stage == u["stage"] and r.unit == u["unit"]]
        parts.append(f"<section class='unit' id='{html.escape(uid)}'><h2>{html.escape(u['stage'])}: "
                     f"{html.escape(u['unit'])}</h2>")
        for name, value in u["inputs"].items():
            parts.append(f"<details><summary>{html.escape(name)}</summary><pre>{html.escape(value)}</pre></details>")
        parts.append(f"<details><summary>output</summary><pre>{html.escape(json.dumps(u['output'], indent=1))}"
                     "</pre></details><ul class='records'>")
        parts += [f"<li>{html.escape(r.reviewer)}: {html.escape(r.verdict)}"
                  f"{' [' + html.escape(r.entry) + ']' if r.entry else ''} {html.escape(r.note)}</li>" for r in given]
        parts.append(f"</ul><form data-stage='{html.escape(u['stage'])}' data-unit='{html.escape(u['unit'])}' "
                     f"data-task='{html.escape(u['task'])}'>"
                     "<input name='reviewer' placeholder='reviewer' required> "
                     "<input name='entry' placeholder='entry (optional)'> "
                     "<input name='note' placeholder='note'> "
                     "<button name='verdict' value='acceptable'>acceptable</button> "
                     "<button name='verdict' value='not_acceptable'>not acceptable</button></form></section>")
    parts.append("""<script>
const token = document.querySelector("meta[name=review-token]").content;
for (const form of document.querySelectorAll("form")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = {task: form.dataset.task, stage: form.dataset.stage, unit: form.dataset.unit,
                  reviewer: data.get("reviewer"), verdict: event.submitter.value, note: data.get("note") || "",
                  entry: data.get("entry") || null};
    const answer = await fetch("/review", {method: "POST", headers: {"Content-Type": "application/json",
                                                                    "X-Review-Token": token},
                                           body: JSON.stringify(body)});
    if (answer.ok) location.reload(); else alert(await answer.text());
  });
}
</script></body></html>""")
    return "".join(parts)


def make_app(gen_dir: Path, port: int, token: str) -> web.Application:
    """The review application for a server on the loopback ``port`` (module docstring)."""
    hosts = {f"{h}:{port}" for h in (LOOPBACK, "localhost")}
    origins = {f"http://{h}" for h in hosts}
    path = Path(gen_dir) / cal.REVIEWS

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.headers.get("Host", "").lower() not in hosts:
            return web.Response(status=403, text="refused: unexpected Host header\n")
        origin = request.headers.get("Origin")
        if request.method != "GET" and (origin is None or origin.lower() not in origins):
            return web.Response(status=403, text="refused: a write needs the page's own Origin\n")
        if origin is not None and origin.lower() not in origins:
            return web.Response(status=403, text="refused: foreign Origin\n")
        return await handler(request)

    async def index(request: web.Request) -> web.Response:
        return web.Response(text=page(gen_dir, token), content_type="text/html",
                            headers={"Cache-Control": "no-store"})

    async def review(request: web.Request) -> web.Response:
        if not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), token):
            return web.Response(status=403, text="refused: missing or wrong review token\n")
        try:
            record = cal.append_review(path, await request.json())
        except ValueError as exc:
            return web.Response(status=400, text=f"refused: {exc}\n")
        return web.json_response(record.model_dump())

    app = web.Application(middlewares=[guard])
    app.router.add_get("/", index)
    app.router.add_post("/review", review)
    return app


async def start(gen_dir: Path, port: int = 0) -> tuple[web.AppRunner, int, str]:
    """Serve the review page on the loopback interface; ``(runner, port, token)``."""
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((LOOPBACK, port))
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    runner = web.AppRunner(make_app(gen_dir, port, token))
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner, port, token
