"""Serve a :class:`harness.view.site.Site` over HTTP, on the loopback interface by default.

A browser page on another site could otherwise read the viewer through DNS
rebinding or a cross-origin request: every request whose ``Host`` header is
not the bound address (or ``localhost`` for a loopback bind), and every
request carrying an ``Origin`` header that is not the viewer's own, is refused
with 403.  GET and HEAD are answered; POST only for the writes of a writable folder page, only when bound
to a loopback address, and only with the viewer's own ``Origin`` (a missing one is refused too) and the
per-launch token (:mod:`harness.view.folders`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import secrets

from aiohttp import web

from harness.view.folders import TOKEN_HEADER
from harness.view.site import Site

LOOPBACK = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> set[str]:
    """``Host`` header values accepted for a server bound to ``host:port``."""
    names = {host, f"[{host}]"} | ({"localhost", LOOPBACK, "[::1]"} if is_loopback(host) else set())
    return {f"{name}:{port}" for name in names} | ({name for name in names} if port == 80 else set())


def make_app(site: Site, host: str, port: int) -> web.Application:
    """The aiohttp application: Host/Origin checks, then the site's paths."""
    hosts = allowed_hosts(host, port)
    origins = {f"http://{h}" for h in hosts}

    @web.middleware
    async def guard(request: web.Request, handler):
        if request.headers.get("Host", "").lower() not in hosts:
            return web.Response(status=403, text="refused: unexpected Host header\n")
        origin = request.headers.get("Origin")
        if origin is not None and origin.lower() not in origins:
            return web.Response(status=403, text="refused: foreign Origin\n")
        return await handler(request)

    async def page(request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        if path == "" or path.endswith("/"):
            path += "index.html"
        found = await asyncio.get_running_loop().run_in_executor(None, site.render, path)
        if found is None:
            return web.Response(status=404, text=f"not found: /{path}\n")
        body, media = found
        return web.Response(body=body, headers={"Content-Type": media, "Cache-Control": "no-store",
                                                "X-Content-Type-Options": "nosniff"})

    async def write(request: web.Request) -> web.StreamResponse:
        own = "http://" + request.headers.get("Host", "").lower()  # the guard accepted this Host
        if request.headers.get("Origin", "").lower() != own:
            return web.Response(status=403, text="refused: a write needs the viewer's own Origin\n")
        token = request.headers.get(TOKEN_HEADER, "").encode("utf-8")
        if site.token is None or not secrets.compare_digest(token, site.token.encode("utf-8")):
            return web.Response(status=403, text="refused: missing or wrong page token\n")
        try:
            body = await request.json()
        except ValueError:
            return web.Response(status=400, text="refused: the body is not JSON\n")
        if not isinstance(body, dict):
            return web.Response(status=400, text="refused: the body is not a JSON object\n")
        found = await asyncio.get_running_loop().run_in_executor(None, site.post, request.match_info["path"], body)
        if found is None:
            return web.Response(status=404, text=f"no such action: /{request.match_info['path']}\n")
        status, answer = found
        return web.Response(status=status, text=json.dumps(answer, default=str), content_type="application/json")

    app = web.Application(middlewares=[guard])
    app.router.add_get("/{path:.*}", page)
    if site.writable and is_loopback(host):
        app.router.add_post("/{path:.*}", write)
    return app


async def start(site: Site, host: str = LOOPBACK, port: int = 0) -> tuple[web.AppRunner, int]:
    """Start serving in the running loop; returns the runner (``await runner.cleanup()`` stops it) and the port."""
    if port == 0:  # bind first so the Host check knows the port
        import socket

        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    runner = web.AppRunner(make_app(site, host, port), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner, port


def serve(site: Site, host: str = LOOPBACK, port: int = 8765, ready=None) -> None:
    """Serve until interrupted; ``ready(url)`` is called once listening."""
    async def main() -> None:
        runner, bound = await start(site, host, port)
        if ready is not None:
            ready(f"http://{'[' + host + ']' if ':' in host else host}:{bound}/")
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
