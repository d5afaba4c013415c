"""An aiohttp server on 127.0.0.1 in a background thread, for tests that need a real upstream."""

from __future__ import annotations

import asyncio
import threading
from typing import Awaitable, Callable

from aiohttp import web


class LocalServer:
    """``with LocalServer(handler) as server:`` serves every path and method with ``handler`` at ``server.url``
    (``http://127.0.0.1:<port>`` + ``prefix``)."""

    def __init__(self, handler: Callable[[web.Request], Awaitable[web.StreamResponse]], prefix: str = ""):
        self.handler, self.prefix = handler, prefix
        self.loop = asyncio.new_event_loop()

    def __enter__(self) -> "LocalServer":
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self.handler)
        self.runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}{self.prefix}"
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
